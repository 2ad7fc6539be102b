package io.gpumem.autoconfigure;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Level;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

import io.gpumem.cuda.CudaDriver;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.pool.MemoryCache;
import io.gpumem.pool.PoolLog;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.reduction.ReductionOp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Closing the context closes the reduction cache and the pools before the device's context is released, reports
 * what is still lent, and keeps the context until that is closed: seen from the driver, told when the context goes.
 */
class ShutdownTest {

	private static final long CAPACITY = 64L << 20;

	@Test
	void theCacheAndPoolsCloseBeforeTheContextAndLentBuffersAreReported() {
		FakeCudaDriver fake = new FakeCudaDriver(CAPACITY);
		Map<String, MemoryCache> caches = new ConcurrentHashMap<>();
		List<String> openAtRelease = new CopyOnWriteArrayList<>();
		CudaDriver driver = noteOpenAtRelease(fake, caches, openAtRelease);
		try (PoolLog log = PoolLog.capture(Level.WARNING)) {
			new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class))
				.withPropertyValues("gpumem.backend=cuda", "gpumem.pressure.enabled=false")
				.withBean(CudaDriver.class, () -> driver)
				.run((context) -> {
					StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
					caches.put("device", device);
					caches.put("pinned", context.getBean("gpumemPinnedPool", StratifiedMemoryPool.class));
					ReductionBufferCache reductions = context.getBean(ReductionBufferCache.class);
					caches.put("reduction", reductions);
					device.acquire(4096).close();
					reductions.acquire(float.class, 4, ReductionOp.SUM).close();
					PooledBuffer forgotten = device.acquire(65536);
					int released = fake.calls("cuDevicePrimaryCtxRelease");
					((ConfigurableApplicationContext) context).close();
					assertThat(fake.calls("cuDevicePrimaryCtxRelease")).as("the context kept for the lent buffer")
						.isEqualTo(released);
					assertThat(log.messages()).as("warnings of the pools' close")
						.containsExactly("Pool 'device' closed with 2.00 MiB still lent out; it goes back to the "
								+ "allocator as its buffers are closed");
					assertThat(device.statistics().inUseBuffers()).as("the pool still reports the lent buffer")
						.isEqualTo(1);
					forgotten.close();
					assertThat(fake.calls("cuDevicePrimaryCtxRelease")).as("the context released with the buffer")
						.isEqualTo(released + 1);
					assertThat(openAtRelease).as("caches still open when the context was released").isEmpty();
					assertThat(fake.liveAllocations()).as("allocations left").isZero();
				});
		}
	}

	/**
	 * With nothing lent and nothing cached, no allocation keeps the context: it is released as the backend closes,
	 * so a pool closed after the backend would still be open then.
	 */
	@Test
	void theCacheAndPoolsCloseBeforeTheContextWhenNothingKeepsIt() {
		FakeCudaDriver fake = new FakeCudaDriver(CAPACITY);
		Map<String, MemoryCache> caches = new ConcurrentHashMap<>();
		List<String> openAtRelease = new CopyOnWriteArrayList<>();
		CudaDriver driver = noteOpenAtRelease(fake, caches, openAtRelease);
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class))
			.withPropertyValues("gpumem.backend=cuda", "gpumem.pressure.enabled=false")
			.withBean(CudaDriver.class, () -> driver)
			.run((context) -> {
				StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				StratifiedMemoryPool pinned = context.getBean("gpumemPinnedPool", StratifiedMemoryPool.class);
				caches.put("device", device);
				caches.put("pinned", pinned);
				ReductionBufferCache reductions = context.getBean(ReductionBufferCache.class);
				caches.put("reduction", reductions);
				device.acquire(4096).close();
				reductions.acquire(float.class, 4, ReductionOp.SUM).close();
				reductions.trim(0);
				device.trim(0);
				pinned.trim(0);
				assertThat(fake.liveAllocations()).as("allocations left before the close").isZero();
				int released = fake.calls("cuDevicePrimaryCtxRelease");
				((ConfigurableApplicationContext) context).close();
				assertThat(fake.calls("cuDevicePrimaryCtxRelease")).as("the context released as the backend closed")
					.isEqualTo(released + 1);
				assertThat(openAtRelease).as("caches still open when the context was released").isEmpty();
			});
	}

	/**
	 * {@code fake}, noting in {@code openAtRelease} which of {@code caches} are still open (a pool not closed, the
	 * reduction cache still holding buffers) as the primary context is released.
	 */
	private static CudaDriver noteOpenAtRelease(FakeCudaDriver fake, Map<String, MemoryCache> caches,
			List<String> openAtRelease) {
		return (CudaDriver) Proxy.newProxyInstance(CudaDriver.class.getClassLoader(),
				new Class<?>[] { CudaDriver.class }, (proxy, method, args) -> {
					if (method.getName().equals("releasePrimaryContext")) {
						caches.forEach((name, cache) -> {
							boolean open = (cache instanceof StratifiedMemoryPool pool) ? !pool.isClosed()
									: cache.cachedBytes() > 0;
							if (open) {
								openAtRelease.add(name);
							}
						});
					}
					try {
						return method.invoke(fake, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

}
