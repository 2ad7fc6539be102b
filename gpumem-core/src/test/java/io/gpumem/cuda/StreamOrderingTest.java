package io.gpumem.cuda;

import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * CUDA's ordering rules as the fake driver keeps them, kernels launched through {@link CudaModule} on
 * it, and the ordering gpumem's own operations rely on.
 */
class StreamOrderingTest {

	/** {@code accumulate(values, n, result)}: adds the n floats into result[0]. */
	private static final String PTX = """
			.version 8.0
			.target sm_75
			.address_size 64

			.visible .entry accumulate(
				.param .u64 accumulate_param_0,
				.param .u32 accumulate_param_1,
				.param .u64 accumulate_param_2
			)
			{
				ret;
			}
			""";

	private FakeCudaDriver driver;

	private CudaBackend backend;

	private StratifiedMemoryPool device;

	private StratifiedMemoryPool pinned;

	private CudaKernel accumulate;

	@BeforeEach
	void open() {
		this.driver = new FakeCudaDriver(64L << 20).kernel("accumulate", (launch) -> {
			FloatBuffer values = launch.memory(0).asFloatBuffer();
			FloatBuffer result = launch.memory(2).asFloatBuffer();
			float sum = result.get(0);
			for (int i = 0; i < launch.intArgument(1); i++) {
				sum += values.get(i);
			}
			result.put(0, sum);
		});
		this.backend = CudaBackend.open(this.driver, 0);
		this.device = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE), PoolConfig.builder("device").build());
		this.pinned = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED), PoolConfig.builder("pinned").build());
		this.accumulate = this.backend.loadModule(ptx(PTX)).kernel("accumulate");
	}

	@AfterEach
	void close() {
		this.device.close();
		this.pinned.close();
		this.backend.close();
	}

	@Test
	void theLegacyStreamIsNotOrderedWithNonBlockingStreams() {
		CudaDriver raw = this.backend.device().bind();
		try (PooledBuffer buffer = this.device.acquire(256)) {
			Object pointer = buffer.unwrap(FakeCudaDriver.FakePointer.class);
			Object stream = raw.createStream();
			raw.memsetD32(pointer, 7, 1, null);
			raw.memsetD32(pointer, 9, 1, stream);
			raw.synchronizeStream(stream);
			int[] word = new int[1];
			raw.copyDeviceToArray(word, 0, pointer, 4);
			assertThat(word[0]).as("the legacy memset ran after the stream's, as CUDA allows").isEqualTo(7);
		}
	}

	@Test
	void theLegacyStreamIsOrderedWithBlockingStreams() {
		CudaDriver raw = this.backend.device().bind();
		try (PooledBuffer buffer = this.device.acquire(256)) {
			Object pointer = buffer.unwrap(FakeCudaDriver.FakePointer.class);
			Object stream = this.driver.createBlockingStream();
			raw.memsetD32(pointer, 7, 1, null);
			raw.memsetD32(pointer, 9, 1, stream);
			raw.synchronizeStream(stream);
			int[] word = new int[1];
			raw.copyDeviceToArray(word, 0, pointer, 4);
			assertThat(word[0]).isEqualTo(9);
		}
	}

	@Test
	void freeingDeviceMemorySynchronizesTheDevice() {
		CudaDriver raw = this.backend.device().bind();
		Object target = raw.allocateDevice(1024);
		Object stream = raw.createStream();
		Object event = raw.createEvent();
		raw.memsetD8(target, (byte) 1, 1024, stream);
		raw.recordEvent(event, stream);
		assertThat(raw.queryEvent(event)).as("querying runs nothing").isFalse();
		raw.freeDevice(raw.allocateDevice(1024));
		assertThat(raw.queryEvent(event)).isTrue();
		raw.freeDevice(target);
	}

	@Test
	void synchronousFillsAndCopiesAreCompleteBeforeLaterStreamWork() {
		try (GpuStream stream = this.backend.createStream(); PooledBuffer values = this.device.acquire(4096);
				PooledBuffer staging = this.pinned.acquire(4096)) {
			values.fillInts(0, 1024, Float.floatToRawIntBits(1f));
			values.copyFromArray(0, new float[] { 5f, 6f }, 0, 2);
			stream.copy(values, staging);
			stream.synchronize();
			float[] back = new float[1024];
			staging.copyTo(back);
			assertThat(back[0]).isEqualTo(5f);
			assertThat(back[1]).isEqualTo(6f);
			assertThat(Arrays.copyOfRange(back, 2, 1024)).containsOnly(1f);
		}
	}

	@Test
	void aKernelRunsAsStreamWorkAfterWhatTheStreamHolds() {
		try (GpuStream stream = this.backend.createStream(); PooledBuffer values = this.device.acquire(64);
				PooledBuffer result = this.device.acquire(4)) {
			values.copyFrom(new float[] { 1f, 2f, 3f, 4f });
			stream.fill(result, 0, 4, (byte) 0);
			this.accumulate.launch(stream, 1, 32, values, 4, result);
			float[] sum = new float[1];
			result.copyTo(sum);
			assertThat(sum[0]).as("not run until the stream is waited for").isZero();
			stream.synchronize();
			result.copyTo(sum);
			assertThat(sum[0]).isEqualTo(10f);
		}
	}

	@Test
	void launchesAreCheckedAgainstThePtxParameters() {
		try (GpuStream stream = this.backend.createStream(); PooledBuffer values = this.device.acquire(64);
				PooledBuffer staging = this.pinned.acquire(64)) {
			assertThatExceptionOfType(CudaException.class)
				.isThrownBy(() -> this.accumulate.launch(stream, 1, 32, values, 4f, values))
				.withMessageContaining("CUDA_ERROR_INVALID_VALUE");
			assertThatExceptionOfType(CudaException.class)
				.isThrownBy(() -> this.accumulate.launch(stream, 1, 32, values, 4))
				.withMessageContaining("CUDA_ERROR_INVALID_VALUE");
			assertThatIllegalArgumentException().isThrownBy(() -> this.accumulate.launch(stream, 1, 32, staging, 4, values))
				.withMessageContaining("argument 0").withMessageContaining("PINNED");
			assertThatIllegalArgumentException().isThrownBy(() -> this.accumulate.launch(stream, 1, 32, values, "4", values))
				.withMessageContaining("argument 1");
			assertThatIllegalArgumentException().isThrownBy(() -> this.accumulate.launch(stream, 0, 32, values, 4, values))
				.withMessageContaining("0 blocks");
		}
		try (CudaModule module = this.backend.loadModule(ptx(PTX))) {
			assertThatExceptionOfType(CudaException.class).isThrownBy(() -> module.kernel("missing"))
				.satisfies((ex) -> assertThat(ex.codeName()).isEqualTo("CUDA_ERROR_NOT_FOUND"));
		}
		try (CudaModule fromFile = this.backend.loadModule(PTX.getBytes(StandardCharsets.US_ASCII))) {
			assertThat(fromFile.kernel("accumulate").name()).isEqualTo("accumulate");
		}
		assertThatExceptionOfType(CudaException.class).isThrownBy(() -> this.backend.loadModule(new byte[] { 'x' }))
			.withMessageContaining("CUDA_ERROR_INVALID_PTX");
	}

	/**
	 * The reduction-reset race: a reduction buffer's identity must be in place before the kernel that
	 * reduces into it runs on the request's stream. With the reset on the legacy default stream and the
	 * kernel on a non-blocking stream, the second request read the first one's sum plus its own (768 for
	 * 512). Odd rounds acquire without a stream (reset at once), even ones on the request's stream.
	 */
	@Test
	void everyReductionStartsFromTheIdentityOnTheRequestsStream() {
		try (ReductionBufferCache reductions = new ReductionBufferCache("reduction", this.device,
				this.pinned, 4)) {
			for (int round = 1; round <= 4; round++) {
				float[] values = new float[256];
				Arrays.fill(values, round);
				try (GpuStream stream = this.backend.createStream(); PooledBuffer input = this.device.acquire(1024);
						PooledBuffer staging = this.pinned.acquire(1024);
						ReductionBuffer sum = (round % 2 == 1) ? reductions.acquire(float.class, 1, ReductionOp.SUM)
								: reductions.acquire(float.class, 1, ReductionOp.SUM, stream)) {
					staging.copyFrom(values);
					stream.copy(staging, input);
					this.accumulate.launch(stream, 1, 256, input, 256, sum);
					assertThat(sum.readResult(0, stream).floatValue()).as("round %d", round).isEqualTo(256f * round);
				}
			}
			assertThat(reductions.statistics().hits()).isEqualTo(3);
		}
	}

	private static byte[] ptx(String text) {
		byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
		return Arrays.copyOf(bytes, bytes.length + 1);
	}

}
