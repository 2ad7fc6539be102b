package io.gpumem.pool;

import java.security.CodeSource;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.gpumem.memory.MemoryHolder;

/**
 * Where a pool's lent buffers were acquired, as its {@link FrameRecording} asks: each recording buffer's block
 * keeps the stack of its acquire while it is lent (a {@link Throwable}, whose frames are read only when a report
 * needs them: a fraction of a {@link StackWalker} walk's cost), so that the largest holders can be named when an
 * acquire fails.
 */
final class AcquireSites {

	/** How many frames outside gpumem name a site. */
	private static final int FRAMES = 6;

	private static final String LOCATION = location(AcquireSites.class);

	/**
	 * Whether a class, by name, is gpumem's own: of its packages and loaded from where this class was (an
	 * application's classes packed into one archive with gpumem are not).
	 */
	private static final Map<String, Boolean> GPUMEM = new ConcurrentHashMap<>();

	private final FrameRecording recording;

	private final Set<Lend> lent = ConcurrentHashMap.newKeySet();

	AcquireSites(FrameRecording recording) {
		this.recording = recording;
	}

	/** Keeps where {@code block} is being lent from, while it is, where its size records frames. */
	void lent(Block block) {
		if (this.recording.records(block.size)) {
			Lend lend = new Lend(this.lent, block.size);
			this.lent.add(lend);
			block.lend = lend;
		}
	}

	/** The {@code count} largest holders by bytes lent, largest first. */
	List<MemoryHolder> top(int count) {
		Map<List<String>, long[]> sites = new HashMap<>();
		for (Lend lend : this.lent) {
			long[] held = sites.computeIfAbsent(frames(lend.getStackTrace()), (site) -> new long[2]);
			held[0] += lend.bytes;
			held[1]++;
		}
		return sites.entrySet()
			.stream()
			.map((site) -> new MemoryHolder(site.getKey(), site.getValue()[0], site.getValue()[1]))
			.sorted(Comparator.comparingLong(MemoryHolder::bytes).reversed())
			.limit(count)
			.toList();
	}

	/** Where the buffer lending {@code block} was acquired, where recorded; empty otherwise. */
	static List<String> frames(Block block) {
		Lend lend = block.lend;
		return (lend != null) ? frames(lend.getStackTrace()) : List.of();
	}

	/** The acquiring code: the first frames outside gpumem. */
	private static List<String> frames(StackTraceElement[] stack) {
		return Arrays.stream(stack)
			.dropWhile((frame) -> GPUMEM.computeIfAbsent(frame.getClassName(), AcquireSites::isGpumem))
			.limit(FRAMES)
			.map((frame) -> frame.getClassName() + "." + frame.getMethodName() + "(" + frame.getFileName() + ":"
					+ frame.getLineNumber() + ")")
			.toList();
	}

	private static boolean isGpumem(String className) {
		if (!className.startsWith("io.gpumem.")) {
			return false;
		}
		try {
			Class<?> type = Class.forName(className, false, AcquireSites.class.getClassLoader());
			return LOCATION != null && LOCATION.equals(location(type));
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

	private static String location(Class<?> type) {
		CodeSource source = type.getProtectionDomain().getCodeSource();
		return (source != null && source.getLocation() != null) ? source.getLocation().toString() : null;
	}

	/** A recording buffer's lend: the stack of its acquire and its block's bytes, kept while it is lent. */
	static final class Lend extends Throwable {

		private final transient Set<Lend> lent;

		private final long bytes;

		Lend(Set<Lend> lent, long bytes) {
			super("acquired here", null, false, true);
			this.lent = lent;
			this.bytes = bytes;
		}

		/** Called as the buffer is closed or reclaimed. */
		void returned() {
			this.lent.remove(this);
		}

	}

}
