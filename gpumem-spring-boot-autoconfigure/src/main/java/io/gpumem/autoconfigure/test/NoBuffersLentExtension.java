package io.gpumem.autoconfigure.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.test.context.junit.jupiter.SpringExtension;

import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.memory.ByteSizes;
import io.gpumem.pool.MemoryCache;
import io.gpumem.pool.PoolStatistics;

/**
 * Fails a Spring test that ends with buffers still lent out of gpumem's pools, naming each pool and what it
 * still lends: {@code @ExtendWith(NoBuffersLentExtension.class)} on a {@code @SpringBootTest} class. Buffers
 * given back once their stream has run (staging of asynchronous transfers) are waited for up to 3 seconds.
 */
public class NoBuffersLentExtension implements AfterEachCallback {

	private static final Duration GRACE = Duration.ofSeconds(3);

	@Override
	public void afterEach(ExtensionContext context) {
		GpumemPools pools = SpringExtension.getApplicationContext(context)
			.getBeanProvider(GpumemPools.class)
			.getIfAvailable();
		if (pools != null) {
			assertNoneLent(pools, GRACE, context.getDisplayName());
		}
	}

	/**
	 * Returns once no pool of {@code pools} lends a buffer, waiting up to {@code grace} for buffers on their way
	 * back.
	 * @throws AssertionError naming every pool still lending, with its buffers and bytes, and {@code test}
	 */
	public static void assertNoneLent(GpumemPools pools, Duration grace, String test) {
		long end = System.nanoTime() + grace.toNanos();
		List<String> lent = lent(pools);
		while (!lent.isEmpty() && System.nanoTime() - end < 0) {
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
			}
			lent = lent(pools);
		}
		if (!lent.isEmpty()) {
			throw new AssertionError(test + " left buffers lent out: " + String.join(", ", lent)
					+ "; close every PooledBuffer (try-with-resources) or the scope that holds it");
		}
	}

	private static List<String> lent(GpumemPools pools) {
		List<String> lent = new ArrayList<>();
		for (MemoryCache pool : pools.asMap().values()) {
			PoolStatistics statistics = pool.statistics();
			if (statistics.inUseBuffers() > 0) {
				lent.add("pool '" + pool.name() + "' " + statistics.inUseBuffers() + " buffer(s), "
						+ ByteSizes.format(statistics.inUseBytes()));
			}
		}
		return lent;
	}

}
