package io.gpumem.pool;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class PooledBufferTest {

	private final StratifiedMemoryPool pool = new StratifiedMemoryPool(
			new HostBackend(16L << 20).allocator(MemoryKind.DEVICE), PoolConfig.builder("device").build());

	@AfterEach
	void close() {
		this.pool.close();
	}

	@Test
	void everyElementTypeRoundTripsByteForByte() {
		SplittableRandom random = new SplittableRandom(1);
		try (PooledBuffer buffer = this.pool.acquire(8 * 1000 + 8)) {
			byte[] bytes = new byte[1000];
			random.nextBytes(bytes);
			int[] ints = random.ints(1000).toArray();
			long[] longs = random.longs(1000).toArray();
			float[] floats = new float[1000];
			double[] doubles = random.doubles(1000).toArray();
			for (int i = 0; i < floats.length; i++) {
				floats[i] = (float) random.nextDouble(-1e6, 1e6);
			}
			buffer.copyFrom(bytes);
			assertRoundTrip(buffer, bytes, new byte[1000]);
			buffer.copyFrom(ints);
			int[] intsBack = new int[1000];
			buffer.copyTo(intsBack);
			assertThat(intsBack).isEqualTo(ints);
			buffer.copyFrom(8, longs, 0, 1000);
			long[] longsBack = new long[1000];
			buffer.copyTo(8, longsBack, 0, 1000);
			assertThat(longsBack).isEqualTo(longs);
			buffer.copyFrom(floats);
			float[] floatsBack = new float[1000];
			buffer.copyTo(floatsBack);
			assertThat(floatsBack).isEqualTo(floats);
			buffer.copyFrom(doubles);
			double[] doublesBack = new double[1000];
			buffer.copyTo(doublesBack);
			assertThat(doublesBack).isEqualTo(doubles);
		}
	}

	@Test
	void partialCopiesUseOffsetsAndIndexes() {
		try (PooledBuffer buffer = this.pool.acquire(64)) {
			buffer.fill((byte) 0);
			buffer.copyFrom(12, new float[] { 1f, 2f, 3f, 4f }, 1, 2);
			float[] back = new float[5];
			buffer.copyTo(8, back, 1, 4);
			assertThat(back).containsExactly(0f, 0f, 2f, 3f, 0f);
			buffer.fill(4, 4, (byte) 0x7F);
			int[] word = new int[1];
			buffer.copyTo(4, word, 0, 1);
			assertThat(word[0]).isEqualTo(0x7F7F7F7F);
		}
	}

	@Test
	void copiesOutOfBoundsAreRefusedAndNameTheRange() {
		try (PooledBuffer buffer = this.pool.acquire(100)) {
			assertThatExceptionOfType(IndexOutOfBoundsException.class)
				.isThrownBy(() -> buffer.copyFrom(0, new double[13], 0, 13))
				.withMessage("copy of 13 DOUBLE elements (104 bytes) at byte offset 0 must lie within the buffer's "
						+ "100 bytes");
			assertThatExceptionOfType(IndexOutOfBoundsException.class)
				.isThrownBy(() -> buffer.copyTo(-4, new int[1], 0, 1)).withMessageContaining("byte offset -4");
			assertThatExceptionOfType(IndexOutOfBoundsException.class)
				.isThrownBy(() -> buffer.copyFrom(0, new int[4], 2, 3)).withMessageContaining("out of bounds for length 4");
			assertThatExceptionOfType(IndexOutOfBoundsException.class)
				.isThrownBy(() -> buffer.copyTo(0, new byte[4], -1, 2));
			assertThatExceptionOfType(IndexOutOfBoundsException.class)
				.isThrownBy(() -> buffer.fill(90, 11, (byte) 0)).withMessageContaining("fill of 11 bytes");
			assertThatExceptionOfType(IndexOutOfBoundsException.class)
				.isThrownBy(() -> buffer.copyFrom(Long.MAX_VALUE, new long[2], 0, 2));
		}
	}

	@Test
	void useAfterCloseThrowsAndCloseIsIdempotent() {
		PooledBuffer buffer = this.pool.acquire(256);
		buffer.close();
		buffer.close();
		assertThat(buffer.isClosed()).isTrue();
		assertThat(this.pool.statistics().returns()).isEqualTo(1);
		assertThat(this.pool.statistics().cachedBuffers()).isEqualTo(1);
		assertThatIllegalStateException().isThrownBy(() -> buffer.copyFrom(new byte[1]))
			.withMessage("buffer of 256 bytes from pool 'device' used after close");
		assertThatIllegalStateException().isThrownBy(() -> buffer.copyTo(new float[1]));
		assertThatIllegalStateException().isThrownBy(() -> buffer.fill((byte) 0));
		assertThatIllegalStateException().isThrownBy(() -> buffer.unwrap(ByteBuffer.class));
		PooledBuffer next = this.pool.acquire(256);
		next.fill((byte) 3);
		assertThatIllegalStateException().isThrownBy(() -> buffer.fill((byte) 9));
		byte[] back = new byte[256];
		next.copyTo(back);
		assertThat(back).containsOnly(3);
		next.close();
	}

	@Test
	void unwrapsToANativeViewOfTheRequestedSize() {
		try (PooledBuffer buffer = this.pool.acquire(1000)) {
			ByteBuffer view = buffer.unwrap(ByteBuffer.class);
			assertThat(view.capacity()).isEqualTo(1000);
			assertThat(view.isDirect()).isTrue();
			view.putFloat(4, 2.5f);
			float[] back = new float[1];
			buffer.copyTo(4, back, 0, 1);
			assertThat(back[0]).isEqualTo(2.5f);
			assertThatIllegalArgumentException().isThrownBy(() -> buffer.unwrap(String.class))
				.withMessageContaining("unwraps to ByteBuffer, not java.lang.String");
			assertThat(buffer.kind()).isEqualTo(MemoryKind.DEVICE);
		}
	}

	@Test
	void typedSizesOverflowingALongAreRefused() {
		assertThat(ElementType.of(float.class).byteSize(1000)).isEqualTo(4000);
		assertThatIllegalArgumentException().isThrownBy(() -> ElementType.DOUBLE.byteSize(Long.MAX_VALUE / 4))
			.withMessageContaining("overflow a 64-bit byte size");
		assertThatIllegalArgumentException().isThrownBy(() -> ElementType.INT.byteSize(-1))
			.withMessageContaining("must not be negative: -1");
		assertThatIllegalArgumentException().isThrownBy(() -> ElementType.of(char.class))
			.withMessageContaining("unsupported element type char");
	}

	private static void assertRoundTrip(PooledBuffer buffer, byte[] expected, byte[] back) {
		buffer.copyTo(back);
		assertThat(back).isEqualTo(expected);
	}

}
