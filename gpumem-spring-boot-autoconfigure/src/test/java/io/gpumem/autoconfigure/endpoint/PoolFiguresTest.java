package io.gpumem.autoconfigure.endpoint;

import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.SleepStatus;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The endpoint's answers carry each of a pool's figures under its own name: mapped from statistics whose
 * figures all differ, a figure copied into another's place shows.
 */
class PoolFiguresTest {

	@Test
	void aPoolsSummaryHasEachFigureUnderItsName() throws Exception {
		PoolStatistics statistics = statisticsThatAllDiffer();
		assertSameFigures(GpumemEndpoint.PoolSummary.of(statistics), statistics);
	}

	@Test
	void aPoolsDetailHasEachFigureUnderItsName() throws Exception {
		PoolStatistics statistics = statisticsThatAllDiffer();
		assertSameFigures(GpumemEndpoint.PoolDetail.of(statistics, SleepStatus.NEVER), statistics);
	}

	/** A real pool's statistics with every number replaced by one no other figure has. */
	private static PoolStatistics statisticsThatAllDiffer() throws Exception {
		PoolStatistics real;
		try (HostBackend backend = new HostBackend(16L << 20);
				StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
						PoolConfig.builder("figures").build())) {
			pool.acquire(4096).close();
			real = pool.statistics();
		}
		return differing(PoolStatistics.class, real, 1000);
	}

	/**
	 * {@code real} with each number replaced by {@code base} plus its place, and each record of numbers alone (the
	 * waits, the claims) likewise from a base of its own.
	 */
	private static <R extends Record> R differing(Class<R> type, R real, long base) throws Exception {
		RecordComponent[] components = type.getRecordComponents();
		Object[] values = new Object[components.length];
		for (int i = 0; i < components.length; i++) {
			Class<?> component = components[i].getType();
			Object value = components[i].getAccessor().invoke(real);
			values[i] = (component == long.class) ? base + i
					: (component == double.class) ? 0.5 + base + i
					: (value instanceof Record record && numbersAlone(record)) ? differing(recordType(record), record,
							base + 100L * (i + 1))
					: value;
		}
		Constructor<R> canonical = type.getDeclaredConstructor(
				Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new));
		return canonical.newInstance(values);
	}

	@SuppressWarnings("unchecked")
	private static <R extends Record> Class<R> recordType(R record) {
		return (Class<R>) record.getClass();
	}

	private static boolean numbersAlone(Record record) {
		return Arrays.stream(record.getClass().getRecordComponents()).allMatch((c) -> c.getType() == long.class);
	}

	/** Every number, and record of numbers, of {@code answer} is the figure of {@code statistics} of the same name. */
	private static void assertSameFigures(Record answer, PoolStatistics statistics) throws Exception {
		for (RecordComponent component : answer.getClass().getRecordComponents()) {
			Object value = component.getAccessor().invoke(answer);
			if (component.getType().isPrimitive() || (value instanceof Record record && numbersAlone(record))) {
				assertThat(value).as(component.getName())
					.isEqualTo(PoolStatistics.class.getMethod(component.getName()).invoke(statistics));
			}
		}
	}

}
