package io.gpumem.pool;

import java.lang.StackWalker.StackFrame;
import java.security.CodeSource;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

import io.gpumem.memory.MemoryHolder;

/**
 * Where a pool's lent buffers were acquired, as its {@link FrameRecording} asks: each recording buffer's block
 * counts in the holding of its acquiring frames while it is lent, so that the largest holders are known at
 * once when an acquire fails.
 */
final class AcquireSites {

	/** How many frames outside gpumem name a site. */
	private static final int FRAMES = 6;

	private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);

	/** Whether a class is gpumem's own: loaded from where this class was. */
	private static final ClassValue<Boolean> GPUMEM = new ClassValue<>() {

		@Override
		protected Boolean computeValue(Class<?> type) {
			String location = location(type);
			return location != null && location.equals(location(AcquireSites.class));
		}

	};

	private final FrameRecording recording;

	private final ConcurrentHashMap<List<String>, Holding> holdings = new ConcurrentHashMap<>();

	AcquireSites(FrameRecording recording) {
		this.recording = recording;
	}

	/** Counts {@code block} in the holding of the calling code, as it is lent, where its size records frames. */
	void lent(Block block) {
		if (this.recording.records(block.size)) {
			Holding holding = this.holdings.computeIfAbsent(here(), Holding::new);
			holding.add(block.size, 1);
			block.holding = holding;
		}
	}

	/** The {@code count} largest holders by bytes lent, largest first. */
	List<MemoryHolder> top(int count) {
		return this.holdings.values()
			.stream()
			.map(Holding::holder)
			.filter((holder) -> holder.bytes() > 0)
			.sorted(Comparator.comparingLong(MemoryHolder::bytes).reversed())
			.limit(count)
			.toList();
	}

	/**
	 * The calling code: the first frames outside gpumem, or where gpumem and the application were packed into
	 * one archive, outside this pool's package.
	 */
	private static List<String> here() {
		List<String> outside = walk((frame) -> GPUMEM.get(frame.getDeclaringClass()));
		return outside.isEmpty()
				? walk((frame) -> frame.getDeclaringClass().getPackage() == AcquireSites.class.getPackage())
				: outside;
	}

	private static List<String> walk(Predicate<StackFrame> skipped) {
		return WALKER.walk((frames) -> frames.dropWhile(skipped)
			.limit(FRAMES)
			.map(AcquireSites::describe)
			.toList());
	}

	private static String location(Class<?> type) {
		CodeSource source = type.getProtectionDomain().getCodeSource();
		return (source != null && source.getLocation() != null) ? source.getLocation().toString() : null;
	}

	private static String describe(StackFrame frame) {
		return frame.getClassName() + "." + frame.getMethodName() + "(" + frame.getFileName() + ":"
				+ frame.getLineNumber() + ")";
	}

	/** The bytes and buffers lent from one site. */
	static final class Holding {

		private final List<String> frames;

		private final LongAdder bytes = new LongAdder();

		private final LongAdder buffers = new LongAdder();

		Holding(List<String> frames) {
			this.frames = frames;
		}

		void add(long bytes, int buffers) {
			this.bytes.add(bytes);
			this.buffers.add(buffers);
		}

		MemoryHolder holder() {
			return new MemoryHolder(this.frames, this.bytes.sum(), this.buffers.sum());
		}

	}

}
