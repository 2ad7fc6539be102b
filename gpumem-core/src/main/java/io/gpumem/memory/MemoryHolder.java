package io.gpumem.memory;

import java.util.List;

/**
 * One of a pool's holders of lent memory: where its buffers were acquired (the first frames outside gpumem,
 * innermost first), and how many bytes and buffers acquired there are lent now, counted or estimated from a sample.
 *
 * @param frames the acquiring frames, such as {@code com.example.Service.add(Service.java:42)}
 * @param bytes bytes of the blocks lent to the buffers acquired there (a block may be larger than its request)
 * @param buffers how many buffers
 * @param sampled whether the bytes and buffers are estimated from a sample of those buffers, each sampled one
 * counted for as many as it stands for, rather than counted one by one
 */
public record MemoryHolder(List<String> frames, long bytes, long buffers, boolean sampled) {

	public MemoryHolder {
		frames = List.copyOf(frames);
	}

	/** One line: "12.00 MiB in 3 buffers acquired at a ← b ← c", each figure after "about" where sampled. */
	public String describe() {
		String about = this.sampled ? "about " : "";
		return about + ByteSizes.format(this.bytes) + " in " + about + this.buffers
				+ ((this.buffers == 1) ? " buffer" : " buffers") + " acquired at " + String.join(" \u2190 ", this.frames);
	}

}
