package io.gpumem.autoconfigure.metrics;

import java.util.function.Function;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.BaseUnits;

import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.transfer.TransferStatistics;
import io.gpumem.transfer.Transfers;

/**
 * The bytes every device's transfers moved, by direction; their durations are the {@code gpumem.transfer}
 * observation's.
 */
public class GpumemTransferMetrics extends DeviceMeterBinder {

	public GpumemTransferMetrics(GpumemDevices devices) {
		super(devices);
	}

	@Override
	void bind(MeterRegistry registry, String device, GpuDevice gpu) {
		gpu.transfers().ifPresent((transfers) -> {
			bytes(registry, device, "upload", transfers, TransferStatistics::uploads);
			bytes(registry, device, "download", transfers, TransferStatistics::downloads);
		});
	}

	private static void bytes(MeterRegistry registry, String device, String direction, Transfers transfers,
			Function<TransferStatistics, TransferStatistics.Direction> side) {
		FunctionCounter.builder("gpumem.transfer.bytes", transfers, (t) -> side.apply(t.statistics()).bytes())
			.tags("device", device, "direction", direction)
			.baseUnit(BaseUnits.BYTES)
			.description("Bytes moved between Java arrays and device buffers through pinned staging")
			.register(registry);
	}

}
