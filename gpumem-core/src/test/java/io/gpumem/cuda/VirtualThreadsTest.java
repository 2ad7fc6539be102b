package io.gpumem.cuda;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuRetryOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A thread per request, as a service on virtual threads runs them: claims, pooled buffers, stream work waited for by
 * parking, buffers closed after their stream, and giving way where every holder waits; every request completes and
 * the books are exact after.
 */
@EnabledForJreRange(min = JRE.JAVA_21, disabledReason = "virtual threads came in Java 21")
class VirtualThreadsTest {

	private static final long MIB = 1L << 20;

	@Test
	void aThousandRequestsEachOnAVirtualThreadOfItsOwnCompleteAndLeaveTheBooksExact() throws Exception {
		FakeCudaDriver driver = new FakeCudaDriver(64 * MIB).progressingWhenPolled();
		ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
			.invoke(null);
		try (CudaBackend backend = CudaBackend.open(driver, 0);
				StratifiedMemoryPool pinned = new StratifiedMemoryPool(backend.allocator(MemoryKind.PINNED),
						PoolConfig.builder("pinned").build());
				StratifiedMemoryPool device = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
						PoolConfig.builder("device").maxWait(Duration.ofSeconds(30)).build())) {
			GpuAdmission admission = new GpuAdmission("fake device 0", 0, Duration.ofSeconds(30), device);
			List<Future<Byte>> requests = new ArrayList<>();
			for (int r = 0; r < 1000; r++) {
				byte value = (byte) r;
				requests.add(virtual.submit(() -> request(backend, pinned, admission, value)));
			}
			for (int r = 0; r < requests.size(); r++) {
				assertThat(requests.get(r).get()).as("request %d read back what it wrote", r).isEqualTo((byte) r);
			}
			await("buffers closed after their stream come back once its work is seen complete")
				.atMost(Duration.ofSeconds(30))
				.until(() -> device.statistics().inUseBytes() == 0);
			PoolStatistics books = device.statistics();
			assertThat(admission.statistics().claimedBytes()).isZero();
			assertThat(books.inUseBytes() + books.cachedBytes()).isEqualTo(books.reservedBytes());
			assertThat(books.requests()).isEqualTo(2000);
			assertThat(pinned.statistics().inUseBytes()).isZero();
		}
		finally {
			virtual.shutdown();
		}
	}

	@Test
	void requestsEachRunOnAVirtualThreadOfItsOwnGiveWayAndAllComplete() throws Exception {
		ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
			.invoke(null);
		try (HostBackend backend = new HostBackend(100 * MIB);
				StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.virtualMemory().allocator(),
						PoolConfig.builder("device").maxWait(Duration.ofMinutes(10)).build())) {
			for (int r = 0; r < 200; r++) {
				virtual.submit(() -> {
					try (PooledBuffer earlier = pool.acquire(2 * MIB)) {
						return earlier.size();
					}
				}).get();
			}
			CountDownLatch allHold = new CountDownLatch(3);
			List<Future<Integer>> requests = new ArrayList<>();
			for (int r = 0; r < 3; r++) {
				requests.add(virtual.submit(() -> {
					for (int run = 1;; run++) {
						boolean first = run == 1;
						if (virtual.submit(() -> attempt(pool, first ? allHold : null)).get()) {
							return run;
						}
					}
				}));
			}
			int runs = 0;
			for (Future<Integer> request : requests) {
				runs += request.get(5, TimeUnit.MINUTES);
			}
			PoolStatistics statistics = pool.statistics();
			assertThat(statistics.memoryWaits().gaveWay()).as("three holding 25 MiB each wait for 40 more")
				.isPositive();
			assertThat(runs).isEqualTo(3 + statistics.memoryWaits().gaveWay());
			assertThat(statistics.memoryWaits().timeouts()).isZero();
			assertThat(statistics.inUseBytes()).isZero();
		}
		finally {
			virtual.shutdown();
		}
	}

	/** Holds 25 MiB, once all three hold theirs asks for 40 more; false where told to give way, having closed both. */
	private static boolean attempt(StratifiedMemoryPool pool, CountDownLatch allHold) throws InterruptedException {
		try (PooledBuffer held = pool.acquire(25 * MIB)) {
			if (allHold != null) {
				allHold.countDown();
				allHold.await();
			}
			try (PooledBuffer more = pool.acquire(40 * MIB)) {
				return true;
			}
		}
		catch (GpuRetryOutOfMemoryException told) {
			return false;
		}
	}

	@Test
	void anInterruptedWaitEndsAndClosingTheStreamStillWaitsForItsWorkAndReleasesEverything() throws Exception {
		FakeCudaDriver driver = new FakeCudaDriver(64 * MIB);
		ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
			.invoke(null);
		try (CudaBackend backend = CudaBackend.open(driver, 0);
				StratifiedMemoryPool pinned = new StratifiedMemoryPool(backend.allocator(MemoryKind.PINNED),
						PoolConfig.builder("pinned").build());
				StratifiedMemoryPool device = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
						PoolConfig.builder("device").build())) {
			AtomicReference<Thread> waiter = new AtomicReference<>();
			CountDownLatch enqueued = new CountDownLatch(1);
			Future<List<Object>> interrupted = virtual.submit(() -> {
				waiter.set(Thread.currentThread());
				GpuStream stream = backend.createStream();
				try (PooledBuffer host = pinned.acquire(4096)) {
					PooledBuffer target = device.acquire(4096);
					stream.fill(target, 0, 4096, (byte) 7);
					stream.copy(target, 0, host, 0, 4096);
					target.closeAfter(stream);
					enqueued.countDown();
					try {
						stream.synchronize();
						return List.of("not interrupted");
					}
					catch (CancellationException ex) {
						boolean stillInterrupted = Thread.currentThread().isInterrupted();
						stream.close();
						return List.of(ex.getMessage(), stillInterrupted, stream.isClosed(),
								host.unwrap(ByteBuffer.class).get(4095));
					}
				}
			});
			enqueued.await();
			waiter.get().interrupt();
			assertThat(interrupted.get(1, TimeUnit.MINUTES)).as("the fake runs work only when waited for in the driver")
				.containsExactly("interrupted while waiting for GPU work", true, true, (byte) 7);
			await("the buffer closed after the stream comes back").atMost(Duration.ofSeconds(30))
				.until(() -> device.statistics().inUseBytes() == 0);
			assertThat(pinned.statistics().inUseBytes()).isZero();
		}
		finally {
			virtual.shutdown();
		}
	}

	/** Enters with 6 MiB, fills a buffer on a stream, copies it through another and back, and reads it. */
	private static byte request(CudaBackend backend, StratifiedMemoryPool pinned, GpuAdmission admission,
			byte value) {
		try (GpuAdmission.Permit permit = admission.enter(6 * MIB, Duration.ofSeconds(30));
				GpuStream stream = backend.createStream();
				PooledBuffer host = pinned.acquire(4096)) {
			PooledBuffer first = permit.acquire(3 * MIB);
			PooledBuffer second = permit.acquire(3 * MIB);
			stream.fill(first, 0, 4096, value);
			stream.copy(first, 0, second, 0, 4096);
			stream.copy(second, 0, host, 0, 4096);
			first.closeAfter(stream);
			second.closeAfter(stream);
			stream.synchronize();
			return host.unwrap(ByteBuffer.class).get(4095);
		}
	}

}
