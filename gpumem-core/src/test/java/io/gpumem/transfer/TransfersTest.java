package io.gpumem.transfer;

import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class TransfersTest {

	private static final int N = 10_007;

	private final SplittableRandom random = new SplittableRandom(3);

	private GpuBackend backend;

	private StratifiedMemoryPool device;

	private StratifiedMemoryPool pinned;

	private GpuStream stream;

	private Transfers transfers;

	static Stream<Named<Supplier<GpuBackend>>> backends() {
		return Stream.of(Named.of("host", () -> new HostBackend(64L << 20)),
				Named.of("cuda on the fake driver", () -> CudaBackend.open(new FakeCudaDriver(64L << 20), 0)));
	}

	private void open(Supplier<GpuBackend> backend) {
		this.backend = backend.get();
		this.device = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build());
		this.pinned = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED),
				PoolConfig.builder("pinned").build());
		this.stream = this.backend.createStream();
		this.transfers = new Transfers(this.pinned);
	}

	@AfterEach
	void close() {
		this.stream.close();
		this.pinned.trim(Long.MAX_VALUE);
		assertThat(this.pinned.statistics().inUseBuffers()).as("every staging buffer went back by the next trim")
			.isZero();
		this.device.close();
		this.pinned.close();
		assertThat(this.backend.memoryInfo().usedBytes()).isZero();
		this.backend.close();
	}

	private List<Object> randomArrays() {
		byte[] bytes = new byte[N];
		this.random.nextBytes(bytes);
		float[] floats = new float[N];
		for (int i = 0; i < N; i++) {
			floats[i] = (float) this.random.nextGaussian();
		}
		return List.of(bytes, this.random.ints(N).toArray(), this.random.longs(N).toArray(), floats,
				this.random.doubles(N).toArray());
	}

	@ParameterizedTest
	@MethodSource("backends")
	void synchronousRoundTripsOfEveryTypeAreByteExact(Supplier<GpuBackend> backend) {
		open(backend);
		for (Object array : randomArrays()) {
			Object back = Array.newInstance(array.getClass().getComponentType(), N);
			try (PooledBuffer buffer = this.device.acquire(8L * N + 16)) {
				this.transfers.upload(this.stream, array, buffer, 16);
				this.transfers.download(this.stream, buffer, 16, back);
			}
			assertThat(back).as(array.getClass().getSimpleName()).isEqualTo(array);
		}
	}

	@ParameterizedTest
	@MethodSource("backends")
	void asynchronousRoundTripsOfEveryTypeAreByteExact(Supplier<GpuBackend> backend) {
		open(backend);
		List<Object> arrays = randomArrays();
		List<PooledBuffer> buffers = arrays.stream().map((array) -> this.device.acquire(8L * N)).toList();
		for (int i = 0; i < arrays.size(); i++) {
			Transfer upload = this.transfers.uploadAsync(this.stream, List.of(TransferPart.of(arrays.get(i),
					buffers.get(i))));
			assertThat(upload.copies()).isEqualTo(1);
		}
		List<Object> backs = arrays.stream()
			.map((array) -> Array.newInstance(array.getClass().getComponentType(), N))
			.toList();
		List<TransferPart> parts = IntStream.range(0, arrays.size())
			.mapToObj((i) -> TransferPart.of(backs.get(i), buffers.get(i)))
			.toList();
		Transfer download = this.transfers.downloadAsync(this.stream, parts);
		download.await();
		assertThat(download.isComplete()).isTrue();
		for (int i = 0; i < arrays.size(); i++) {
			assertThat(backs.get(i)).isEqualTo(arrays.get(i));
		}
		buffers.forEach(PooledBuffer::close);
	}

	@ParameterizedTest
	@MethodSource("backends")
	void statisticsCountTransfersAndTheirBytesAndTimeThoseAwaited(Supplier<GpuBackend> backend) {
		open(backend);
		try (PooledBuffer buffer = this.device.acquire(4096)) {
			this.transfers.upload(this.stream, new float[100], buffer, 0);
			Transfer pending = this.transfers.uploadAsync(this.stream, List.of(TransferPart.of(new byte[3], buffer)));
			this.transfers.download(this.stream, buffer, 0, new double[10]);
			TransferStatistics.Direction uploads = this.transfers.statistics().uploads();
			assertThat(uploads.transfers()).isEqualTo(2);
			assertThat(uploads.bytes()).isEqualTo(403);
			assertThat(uploads.completed()).as("the async upload is not awaited yet").isEqualTo(1);
			pending.await();
			assertThat(this.transfers.statistics().uploads().completed()).isEqualTo(2);
			TransferStatistics.Direction downloads = this.transfers.statistics().downloads();
			assertThat(downloads).extracting(TransferStatistics.Direction::transfers, TransferStatistics.Direction::bytes,
					TransferStatistics.Direction::completed).containsExactly(1L, 80L, 1L);
			assertThat(downloads.nanos()).isPositive();
		}
	}

	@ParameterizedTest
	@MethodSource("backends")
	void adjacentSmallPartsTravelAsOneCopy(Supplier<GpuBackend> backend) {
		open(backend);
		float[][] rows = new float[64][16];
		for (float[] row : rows) {
			for (int j = 0; j < row.length; j++) {
				row[j] = (float) this.random.nextDouble();
			}
		}
		try (PooledBuffer matrix = this.device.acquire(64 * 16 * 4); PooledBuffer other = this.device.acquire(64)) {
			List<TransferPart> parts = new ArrayList<>();
			for (int r = 0; r < rows.length; r++) {
				parts.add(new TransferPart(rows[r], matrix, (long) r * 16 * 4));
			}
			parts.add(TransferPart.of(new int[] { 1, 2, 3 }, other));
			try (Transfer upload = this.transfers.uploadAsync(this.stream, parts)) {
				assertThat(upload.copies()).as("64 adjacent rows in one copy, the other buffer in another").isEqualTo(2);
			}
			float[] all = new float[64 * 16];
			this.transfers.download(this.stream, matrix, 0, all);
			for (int r = 0; r < rows.length; r++) {
				assertThat(Arrays.copyOfRange(all, r * 16, r * 16 + 16)).isEqualTo(rows[r]);
			}
			int[] three = new int[3];
			this.transfers.download(this.stream, other, 0, three);
			assertThat(three).containsExactly(1, 2, 3);
		}
	}

	@ParameterizedTest
	@MethodSource("backends")
	void partsThatDoNotFitAreRefusedBeforeAnythingMoves(Supplier<GpuBackend> backend) {
		open(backend);
		try (PooledBuffer small = this.device.acquire(16)) {
			assertThatExceptionOfType(IndexOutOfBoundsException.class)
				.isThrownBy(() -> this.transfers.upload(this.stream, new long[3], small, 0));
			assertThatIllegalArgumentException().isThrownBy(() -> TransferPart.of(new short[2], small));
			assertThatIllegalArgumentException().isThrownBy(() -> this.transfers.uploadAsync(this.stream, List.of()));
			assertThat(this.pinned.statistics().requests()).isZero();
		}
		assertThatIllegalArgumentException().isThrownBy(() -> new Transfers(this.device)).withMessageContaining("PINNED");
	}

}
