package io.gpumem.autoconfigure.metrics;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.admission.GpuAdmissionException;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.SleepMode;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.stream.GpuStream;
import io.gpumem.transfer.Transfers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** The meters of every subject, bound as the auto-configuration binds them. */
class GpumemMetricsTest {

	private final HostBackend backend = new HostBackend(16L << 20);

	private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
			PoolConfig.builder("device").sizeClasses(4096, 1L << 20).build());

	private final PressureHandler pressure = PressureHandler.builder(this.backend::memoryInfo).build();

	private final GpuAdmission admission = new GpuAdmission("host device 0", 1, Duration.ofMillis(20));

	private final StratifiedMemoryPool pinned = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED),
			PoolConfig.builder("pinned").build());

	private final Transfers transfers = new Transfers(this.pinned);

	@AfterEach
	void close() {
		this.pool.close();
		this.pinned.close();
	}

	private void bind(MeterRegistry registry) {
		GpuDevice device = GpuDevice.builder(this.backend, this.pool)
			.budget(new MemoryBudget(12L << 20))
			.pinnedPool(this.pinned)
			.transfers(this.transfers)
			.pressure(this.pressure)
			.admission(this.admission)
			.build();
		GpumemDevices devices = new GpumemDevices(List.of(device));
		List.of(new GpumemPoolMetrics(new GpumemPools(devices)), new GpumemDeviceMetrics(devices),
				new GpumemTransferMetrics(devices), new GpumemAdmissionMetrics(devices), new GpumemPressureMetrics(devices))
			.forEach((binder) -> binder.bindTo(registry));
	}

	@Test
	void metersFollowThePoolsFiguresWithTagsForTheVariablePart() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		bind(registry);
		this.pool.acquire(4096).close();
		this.pool.acquire(4096).close();
		PooledBuffer held = this.pool.acquire(1L << 20);
		assertThat(registry.get("gpumem.pool.memory").tags("pool", "device", "state", "used").gauge().value())
			.isEqualTo(1L << 20);
		assertThat(registry.get("gpumem.pool.memory").tags("pool", "device", "state", "cached").gauge().value())
			.as("the 4 KiB buffer in the free lists and the rest of the 2 MiB segment")
			.isEqualTo(1L << 20);
		assertThat(registry.get("gpumem.pool.buffers").tags("pool", "device", "state", "used").gauge().value())
			.isEqualTo(1);
		assertThat(registry.get("gpumem.pool.requests").tags("pool", "device", "result", "hit").functionCounter()
			.count()).as("the second 4 KiB buffer, and the 1 MiB one cut from the segment").isEqualTo(2);
		assertThat(registry.get("gpumem.pool.requests").tags("pool", "device", "result", "miss").functionCounter()
			.count()).isEqualTo(1);
		assertThat(registry.get("gpumem.pool.segments").tags("pool", "device").gauge().value()).isEqualTo(1);
		assertThat(registry.get("gpumem.pool.segments.memory").tags("pool", "device", "state", "reserved").gauge()
			.value()).isEqualTo(2L << 20);
		assertThat(registry.get("gpumem.pool.segments.memory").tags("pool", "device", "state", "free").gauge()
			.value()).isEqualTo((1L << 20) - 4096);
		assertThat(registry.get("gpumem.pool.segments.largest.free").tags("pool", "device").gauge().value())
			.isEqualTo((1L << 20) - 4096);
		assertThat(registry.get("gpumem.pool.fragmentation").tags("pool", "device").gauge().value()).isZero();
		assertThat(registry.get("gpumem.device.memory.total").tags("device", "0").gauge().value())
			.isEqualTo(16L << 20);
		assertThat(registry.find("gpumem.device.memory").tags("state", "total").gauge()).as("a total is no state")
			.isNull();
		assertThat(registry.get("gpumem.device.memory.budget").tags("device", "0").gauge().value())
			.isEqualTo(12L << 20);
		assertThat(registry.get("gpumem.pool.memory.max").tags("pool", "device").gauge().value())
			.isEqualTo(512L << 20);
		assertThat(registry.get("gpumem.pool.miss").tags("pool", "device").functionTimer().count()).isEqualTo(1);
		assertThat(registry.get("gpumem.pool.miss").tags("pool", "device").functionTimer()
			.totalTime(TimeUnit.NANOSECONDS)).isPositive();
		assertThat(registry.get("gpumem.pool.leaks").tags("pool", "device").functionCounter().count()).isZero();
		assertThat(registry.get("gpumem.device.memory").tags("device", "0", "state", "used").gauge().value())
			.isEqualTo(2L << 20);
		assertThat(registry.get("gpumem.device.failures").tags("device", "0").functionCounter().count()).isZero();
		held.close();
		Allocation other = this.backend.allocator(MemoryKind.DEVICE).allocate(10L << 20);
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> this.pool.acquire(8L << 20));
		this.backend.allocator(MemoryKind.DEVICE).free(other);
		assertThat(registry.get("gpumem.allocation.failures").tags("pool", "device").functionCounter().count())
			.isEqualTo(1);
		assertThat(registry.get("gpumem.pool.trimmed").tags("pool", "device").functionCounter().count())
			.as("the out-of-memory path gave back the segment, free once the cached buffer was trimmed")
			.isEqualTo(2L << 20);
		assertThat(registry.get("gpumem.pressure.level").gauge().value()).isZero();
	}

	@Test
	void aPoolsSleepsAndWakesAreMetered() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		bind(registry);
		this.pool.acquire(4096).close();
		this.pool.sleep(SleepMode.OFFLOAD);
		assertThat(registry.get("gpumem.pool.asleep").tags("pool", "device").gauge().value()).isEqualTo(1);
		assertThat(registry.get("gpumem.pool.asleep").tags("pool", "pinned").gauge().value()).isZero();
		assertThat(registry.get("gpumem.pool.sleep.offloaded").tags("pool", "device").gauge().value())
			.as("nothing lent, nothing offloaded").isZero();
		this.pool.acquire(4096).close();
		assertThat(registry.get("gpumem.pool.asleep").tags("pool", "device").gauge().value()).isZero();
		assertThat(registry.get("gpumem.pool.sleep.changes").tags("pool", "device", "change", "sleep")
			.functionCounter().count()).isEqualTo(1);
		assertThat(registry.get("gpumem.pool.sleep.changes").tags("pool", "device", "change", "wake")
			.functionCounter().count()).isEqualTo(1);
	}

	@Test
	void admissionAndWaitsForMemoryAreMetered() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		bind(registry);
		GpuAdmission.Permit permit = this.admission.enter();
		assertThat(registry.get("gpumem.admission.active").tags("device", "0").gauge().value()).isEqualTo(1);
		assertThat(registry.get("gpumem.admission.limit").gauge().value()).isEqualTo(1);
		assertThatExceptionOfType(GpuAdmissionException.class).isThrownBy(this.admission::enter);
		permit.close();
		assertThat(registry.get("gpumem.admission.rejections").functionCounter().count()).isEqualTo(1);
		assertThat(registry.get("gpumem.admission.wait").functionTimer().count()).isEqualTo(1);
		assertThat(registry.get("gpumem.admission.wait").functionTimer().totalTime(TimeUnit.MILLISECONDS))
			.isGreaterThanOrEqualTo(20);
		assertThat(registry.get("gpumem.admission.active").gauge().value()).isZero();
		PooledBuffer held = this.pool.acquire(16L << 20);
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> this.pool.acquire(1L << 20, Duration.ofMillis(30)));
		held.close();
		assertThat(registry.get("gpumem.pool.memory.wait").tags("pool", "device").functionTimer().count())
			.isEqualTo(1);
		assertThat(registry.get("gpumem.pool.memory.wait.timeouts").tags("pool", "device").functionCounter().count())
			.isEqualTo(1);
	}

	@Test
	void transfersAreMeteredByDirection() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		bind(registry);
		float[] values = { 1, 2, 3, 4 };
		try (PooledBuffer buffer = this.pool.acquire(16); GpuStream stream = this.backend.createStream()) {
			this.transfers.upload(stream, values, buffer, 0);
			this.transfers.download(stream, buffer, 0, new float[4]);
			this.transfers.download(stream, buffer, 0, new float[2]);
		}
		assertThat(registry.get("gpumem.transfer.bytes").tags("direction", "upload").functionCounter().count())
			.isEqualTo(16);
		assertThat(registry.get("gpumem.transfer.bytes").tags("direction", "download").functionCounter().count())
			.isEqualTo(24);
	}

	@Test
	void everyPrometheusFamilyHasADescription() {
		PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		bind(registry);
		List<String> families = registry.scrape().lines().filter((line) -> line.startsWith("# HELP gpumem_")).toList();
		assertThat(families).hasSizeGreaterThan(20)
			.allSatisfy((help) -> assertThat(help.split(" ", 4)).as(help).hasSize(4))
			.noneMatch((help) -> help.endsWith(" "));
	}

	@Test
	void prometheusShowsByteMetersWithTheirUnit() {
		PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		bind(registry);
		String scrape = registry.scrape();
		assertThat(scrape).contains("gpumem_pool_memory_bytes{device=\"0\",pool=\"device\",state=\"used\"}")
			.contains("gpumem_pool_memory_bytes{device=\"0\",pool=\"device\",state=\"cached\"}")
			.contains("gpumem_device_memory_bytes{device=\"0\",state=\"free\"}")
			.contains("gpumem_pool_requests_total{device=\"0\",pool=\"device\",result=\"hit\"}")
			.contains("gpumem_pool_trimmed_bytes_total{device=\"0\",pool=\"device\"}")
			.contains("gpumem_pool_buffers{device=\"0\",pool=\"device\",state=\"cached\"}")
			.contains("gpumem_pool_segments_memory_bytes{device=\"0\",pool=\"device\",state=\"free\"}")
			.contains("gpumem_pool_segments_largest_free_bytes{device=\"0\",pool=\"device\"}")
			.contains("gpumem_pool_fragmentation{device=\"0\",pool=\"device\"}")
			.contains("gpumem_allocation_failures_total{device=\"0\",pool=\"device\"}")
			.contains("gpumem_pressure_level{device=\"0\",memory=\"device\"}")
			.contains("gpumem_admission_wait_seconds_count{device=\"0\"}")
			.contains("gpumem_admission_rejections_total{device=\"0\"}")
			.contains("gpumem_pool_memory_wait_seconds_sum{device=\"0\",pool=\"device\"}")
			.contains("gpumem_device_memory_total_bytes{device=\"0\"}")
			.contains("gpumem_device_memory_budget_bytes{device=\"0\"}")
			.contains("gpumem_pool_memory_max_bytes{device=\"0\",pool=\"device\"}")
			.contains("gpumem_pool_miss_seconds_count{device=\"0\",pool=\"device\"}")
			.contains("gpumem_pool_leaks_buffers_total{device=\"0\",pool=\"device\"}")
			.contains("gpumem_transfer_bytes_total{device=\"0\",direction=\"upload\"}");
	}

}
