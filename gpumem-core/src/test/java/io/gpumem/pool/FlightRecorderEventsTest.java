package io.gpumem.pool;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pressure.PressureHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A flight recording with the JDK's {@code default} or {@code profile} settings holds the pools' and the pressure
 * handler's events.
 */
class FlightRecorderEventsTest {

	@ParameterizedTest
	@ValueSource(strings = { "default", "profile" })
	void aRecordingHoldsMissesTrimsSegmentsOutOfMemoryPressureAndSleeps(String settings, @TempDir Path directory)
			throws Exception {
		HostBackend backend = new HostBackend(16L << 20);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("recorded").build());
		PressureHandler pressure = PressureHandler.builder(backend::memoryInfo).build();
		Path file = directory.resolve("gpumem.jfr");
		try (Recording recording = new Recording(Configuration.getConfiguration(settings))) {
			recording.start();
			pool.acquire(1 << 20).close();
			pool.acquire(1 << 20).close();
			pool.trim(0);
			Allocation other = backend.allocator(MemoryKind.DEVICE).allocate(15L << 20);
			pressure.check();
			assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.acquire(4L << 20));
			backend.allocator(MemoryKind.DEVICE).free(other);
			pool.sleep(SleepMode.DISCARD);
			pool.wake();
			recording.stop();
			recording.dump(file);
		}
		finally {
			pool.close();
			pressure.close();
		}
		Map<String, List<RecordedEvent>> events = RecordingFile.readAllEvents(file)
			.stream()
			.filter((event) -> event.getEventType().getName().startsWith("io.gpumem.")
					&& (!event.hasField("pool") || "recorded".equals(event.getString("pool"))))
			.collect(Collectors.groupingBy((event) -> event.getEventType().getName()));
		assertThat(events.get("io.gpumem.Miss")).as("one miss served, one failed, none for the hit")
			.extracting((event) -> event.getBoolean("failed"))
			.containsExactly(false, true);
		assertThat(events.get("io.gpumem.Miss").get(0).getString("pool")).isEqualTo("recorded");
		assertThat(events.get("io.gpumem.Miss").get(0).getLong("bytes")).isEqualTo(1 << 20);
		assertThat(events.get("io.gpumem.SegmentAllocated")).extracting((event) -> event.getLong("bytes"))
			.containsExactly(2L << 20);
		assertThat(events.get("io.gpumem.SegmentReleased")).extracting((event) -> event.getLong("bytes"))
			.containsExactly(2L << 20);
		assertThat(events.get("io.gpumem.Trim")).singleElement()
			.satisfies((event) -> assertThat(event.getLong("releasedBytes")).isEqualTo(2L << 20));
		assertThat(events.get("io.gpumem.OutOfMemory")).singleElement()
			.satisfies((event) -> assertThat(event.getString("message")).contains("tried to allocate 4.00 MiB"));
		assertThat(events.get("io.gpumem.PressureLevel")).singleElement()
			.satisfies((event) -> assertThat(event.getString("to")).isEqualTo("CRITICAL"));
		assertThat(events.get("io.gpumem.PoolSleep")).extracting((event) -> event.getString("action"),
				(event) -> event.getString("mode"))
			.containsExactly(tuple("sleep", "DISCARD"), tuple("wake", "a call"));
		assertThat(Files.size(file)).isPositive();
	}

}
