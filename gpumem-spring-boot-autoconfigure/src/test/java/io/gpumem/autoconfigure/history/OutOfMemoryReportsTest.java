package io.gpumem.autoconfigure.history;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.gpumem.autoconfigure.GpumemAutoConfiguration;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.OutOfMemoryDiagnostic;
import io.gpumem.pool.OutOfMemoryObserver;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code gpumem.history.*}: out-of-memory failures name their largest holders, reach every
 * {@link OutOfMemoryObserver} bean, and are written to {@code oom-dump-dir} where it is set.
 */
@ExtendWith(OutputCaptureExtension.class)
class OutOfMemoryReportsTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class))
		.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=64MB", "gpumem.pressure.enabled=false",
				"gpumem.leak-detection=disabled");

	@Test
	void aFailureReachesTheObserverBeansAndIsDumpedWithItsHolders(@TempDir Path directory, CapturedOutput output) {
		List<OutOfMemoryDiagnostic> observed = new ArrayList<>();
		this.runner.withPropertyValues("gpumem.history.oom-dump-dir=" + directory)
			.withBean("recordingObserver", OutOfMemoryObserver.class,
					() -> (pool, report) -> observed.add(report))
			.run((context) -> {
				StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				try (PooledBuffer held = holdFortyMegabytes(device)) {
					assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.acquire(32L << 20))
						.withMessageContaining("The largest holders: 40.00 MiB in 1 buffer acquired at "
								+ getClass().getName() + ".holdFortyMegabytes(");
				}
				assertThat(observed).singleElement()
					.satisfies((report) -> assertThat(report.holders()).hasSize(1));
				Path dump;
				try (Stream<Path> files = Files.list(directory)) {
					dump = files.toList().get(0);
				}
				assertThat(dump.getFileName().toString()).startsWith("gpumem-oom-device-").endsWith(".json");
				DocumentContext written = JsonPath.parse(dump.toFile());
				String holder = getClass().getName() + ".holdFortyMegabytes(";
				assertThat(written.read("$.pool", String.class)).isEqualTo("device");
				assertThat(written.read("$.failure.requestedBytes", Long.class)).isEqualTo(32L << 20);
				assertThat(written.read("$.failure.largestFreeBlockBytes", Long.class)).isLessThan(32L << 20);
				assertThat(written.read("$.failure.holders[0].bytes", Long.class)).isEqualTo(40L << 20);
				assertThat(written.read("$.failure.holders[0].frames[0]", String.class)).startsWith(holder);
				assertThat(written.read("$.statistics.inUseBytes", Long.class)).isEqualTo(40L << 20);
				List<Number> segments = written.read("$.snapshot.segments[*].bytes");
				assertThat(segments.stream().mapToLong(Number::longValue).sum()).as("the memory map adds up")
					.isEqualTo(written.read("$.snapshot.reservedBytes", Long.class))
					.isEqualTo(written.read("$.statistics.reservedBytes", Long.class))
					.isEqualTo(40L << 20);
				assertThat(written.read("$.snapshot.segments[0].blocks[0].acquiredAt[0]", String.class))
					.startsWith(holder);
				List<String> events = written.read("$.history.events[*].type");
				assertThat(events).as("the failure last").last().isEqualTo("OUT_OF_MEMORY");
				assertThat(events).contains("SEGMENT_ALLOCATED", "ACQUIRE");
				assertThat(output).contains("Pool 'device' ran out of memory; its report is in " + dump);
			});
	}

	@Test
	void withoutADirectoryNothingIsWrittenAndFramesCanBeTurnedOff() {
		this.runner.withPropertyValues("gpumem.history.buffers=off").run((context) -> {
			assertThat(context).doesNotHaveBean(OutOfMemoryDumps.class);
			StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
			try (PooledBuffer held = holdFortyMegabytes(device)) {
				assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.acquire(32L << 20))
					.satisfies((ex) -> assertThat(ex.diagnostic().holders()).isEmpty());
			}
		});
	}

	@Test
	void aNegativeNumberOfEventsStopsStartupNamingTheProperty() {
		this.runner.withPropertyValues("gpumem.history.events=-1")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("gpumem.history.events")
				.hasMessageContaining("must not be negative"));
	}

	private static PooledBuffer holdFortyMegabytes(StratifiedMemoryPool device) {
		return device.acquire(40L << 20);
	}

}
