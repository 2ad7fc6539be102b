package io.gpumem.pool.diagnostics;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which buffers keep their acquiring frames: by default one per sixteenth of the device acquired, from 16 MiB to
 * 1 GiB, so that a large hit on a large device rarely pays for a stack.
 */
class BufferRecordingTest {

	private static final long MIB = 1L << 20;

	@Test
	void keepsOneBuffersFramesPerSixteenthOfTheDeviceAcquiredByDefault() {
		assertThat(BufferRecording.LARGE.framesEveryBytes(64 * MIB)).as("a small device: every 16 MiB")
			.isEqualTo(16 * MIB);
		assertThat(BufferRecording.LARGE.framesEveryBytes(8192 * MIB)).isEqualTo(512 * MIB);
		assertThat(BufferRecording.LARGE.framesEveryBytes(80_000 * MIB)).as("at most 1 GiB").isEqualTo(1024 * MIB);
		assertThat(BufferRecording.LARGE.framesEveryBytes(0)).as("a device that cannot tell").isEqualTo(16 * MIB);
	}

	@Test
	void keepsEveryBuffersFramesOrNoneWhateverTheDevice() {
		assertThat(BufferRecording.ALL.framesEveryBytes(80_000 * MIB)).isZero();
		assertThat(BufferRecording.OFF.framesEveryBytes(64 * MIB)).isEqualTo(Long.MAX_VALUE);
	}

}
