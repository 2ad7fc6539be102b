package io.gpumem.cuda;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * A range of virtual addresses the fake driver reserved ({@code cuMemAddressReserve}), and the physical memory
 * mapped into it, with CUDA's rules: whole granules, access set before use, whole mappings unmapped, and the bytes
 * belonging to the physical memory, which takes them along when mapped elsewhere. The range's bytes are a sparse
 * file mapped into the JVM, so that reserving costs no memory and only the bytes written take any; the fake
 * reserves at most 2 GiB at once.
 */
final class FakeAddressRange {

	/** What a mapping of memory no one wrote reads, 64 KiB of it. */
	private static final ByteBuffer UNWRITTEN = ByteBuffer.wrap(filled(64 << 10, (byte) 0xCD)).asReadOnlyBuffer();

	final long bytes;

	final ByteBuffer memory;

	/** The mappings, by offset into the range. */
	private final NavigableMap<Long, Mapping> mappings = new TreeMap<>();

	FakeAddressRange(long bytes) {
		this.bytes = bytes;
		this.memory = sparse(bytes);
	}

	/**
	 * Maps {@code physical} at {@code offset}, with the bytes it held where it was mapped before, or bytes no one
	 * wrote (a fill of 0xCD, not zeros, which CUDA does not promise): false where the span leaves the range or
	 * meets a mapping.
	 */
	synchronized boolean map(long offset, Physical physical) {
		long end = offset + physical.bytes;
		if (offset < 0 || end > this.bytes) {
			return false;
		}
		Map.Entry<Long, Mapping> before = this.mappings.floorEntry(end - 1);
		if (before != null && before.getValue().end() > offset) {
			return false;
		}
		this.mappings.put(offset, new Mapping(offset, physical));
		physical.mapped++;
		ByteBuffer target = this.memory.slice((int) offset, (int) physical.bytes);
		if (physical.held != null) {
			target.put(physical.held.duplicate().clear());
		}
		else {
			while (target.hasRemaining()) {
				target.put(UNWRITTEN.duplicate().limit(Math.min(UNWRITTEN.capacity(), target.remaining())));
			}
		}
		return true;
	}

	/**
	 * Unmaps the mappings that exactly fill {@code [offset, offset + bytes)}: null, unmapping nothing, where the
	 * span starts or ends inside a mapping or covers an unmapped byte.
	 */
	synchronized List<Physical> unmap(long offset, long bytes) {
		List<Mapping> covered = covering(offset, bytes);
		if (covered == null) {
			return null;
		}
		List<Physical> unmapped = new ArrayList<>();
		for (Mapping mapping : covered) {
			this.mappings.remove(mapping.offset);
			Physical physical = mapping.physical;
			physical.mapped--;
			if (!physical.released) {
				physical.held = ByteBuffer.allocate((int) physical.bytes)
					.put(this.memory.slice((int) mapping.offset, (int) physical.bytes));
			}
			unmapped.add(physical);
		}
		return unmapped;
	}

	/** Lets the device read and write the mappings that exactly fill the span: false where they do not. */
	synchronized boolean setAccess(long offset, long bytes) {
		List<Mapping> covered = covering(offset, bytes);
		if (covered == null) {
			return false;
		}
		covered.forEach((mapping) -> mapping.accessible = true);
		return true;
	}

	/** Whether every byte of the span is mapped with access set. */
	synchronized boolean accessible(long offset, long bytes) {
		return bytes == 0 || accessibleEnd(offset) >= offset + bytes;
	}

	/** Where the run of mapped, accessible bytes that starts at {@code offset} ends; {@code offset} if none does. */
	synchronized long accessibleEnd(long offset) {
		long end = offset;
		Map.Entry<Long, Mapping> at = this.mappings.floorEntry(offset);
		while (at != null && at.getValue().accessible && at.getValue().end() > end && at.getKey() <= end) {
			end = at.getValue().end();
			at = this.mappings.higherEntry(at.getKey());
		}
		return end;
	}

	synchronized boolean isMapped() {
		return !this.mappings.isEmpty();
	}

	/** The contiguous mappings that start at {@code offset} and end at {@code offset + bytes}, or null. */
	private List<Mapping> covering(long offset, long bytes) {
		List<Mapping> covered = new ArrayList<>();
		long next = offset;
		while (next < offset + bytes) {
			Mapping mapping = this.mappings.get(next);
			if (mapping == null) {
				return null;
			}
			covered.add(mapping);
			next = mapping.end();
		}
		return (next == offset + bytes && bytes > 0) ? covered : null;
	}

	private static byte[] filled(int length, byte value) {
		byte[] bytes = new byte[length];
		Arrays.fill(bytes, value);
		return bytes;
	}

	private static ByteBuffer sparse(long bytes) {
		try {
			Path file = Files.createTempFile("fake-cuda-range", ".bin");
			try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
					StandardOpenOption.DELETE_ON_CLOSE)) {
				return channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes).order(ByteOrder.nativeOrder());
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Physical memory of a device ({@code cuMemCreate}): charged until released and unmapped everywhere. */
	static final class Physical {

		final int device;

		final long bytes;

		boolean released;

		int mapped;

		/** Its bytes while mapped nowhere, since it was last unmapped; null before. */
		ByteBuffer held;

		Physical(int device, long bytes) {
			this.device = device;
			this.bytes = bytes;
		}

		/** Whether its memory goes back to the device: released, and mapped nowhere. */
		boolean gone() {
			return this.released && this.mapped == 0;
		}

	}

	/** One {@code cuMemMap}: a handle's memory at an offset of the range, and whether its access was set. */
	private static final class Mapping {

		final long offset;

		final Physical physical;

		boolean accessible;

		Mapping(long offset, Physical physical) {
			this.offset = offset;
			this.physical = physical;
		}

		long end() {
			return this.offset + this.physical.bytes;
		}

	}

}
