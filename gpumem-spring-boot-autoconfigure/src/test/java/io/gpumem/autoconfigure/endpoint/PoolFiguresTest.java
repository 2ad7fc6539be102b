package io.gpumem.autoconfigure.endpoint;

import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolStatistics;
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
		assertSameFigures(GpumemEndpoint.PoolDetail.of(statistics), statistics);
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
		RecordComponent[] components = PoolStatistics.class.getRecordComponents();
		Object[] values = new Object[components.length];
		for (int i = 0; i < components.length; i++) {
			Class<?> type = components[i].getType();
			values[i] = (type == long.class) ? 1000L + i
					: (type == double.class) ? 0.5 + i : components[i].getAccessor().invoke(real);
		}
		Constructor<PoolStatistics> canonical = PoolStatistics.class.getDeclaredConstructor(
				Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new));
		return canonical.newInstance(values);
	}

	/** Every number of {@code answer} is the figure of {@code statistics} of the same name. */
	private static void assertSameFigures(Record answer, PoolStatistics statistics) throws Exception {
		for (RecordComponent component : answer.getClass().getRecordComponents()) {
			if (component.getType().isPrimitive()) {
				assertThat(component.getAccessor().invoke(answer)).as(component.getName())
					.isEqualTo(PoolStatistics.class.getMethod(component.getName()).invoke(statistics));
			}
		}
	}

}
