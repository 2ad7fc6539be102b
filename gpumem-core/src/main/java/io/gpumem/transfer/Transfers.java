package io.gpumem.transfer;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.MemoryKind;
import io.gpumem.observation.MemoryObserver;
import io.gpumem.observation.MemoryOperation;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.stream.GpuStream;

/**
 * Moves Java arrays to and from device buffers through pooled pinned staging: the array is copied into
 * pinned memory the device can reach, and the device copies from there on a stream (and the reverse
 * for downloads). Synchronous methods wait; {@code Async} ones answer a {@link Transfer} to wait on.
 * <p>
 * Several parts handed at once share one staging buffer, and parts that are adjacent both in staging
 * and on the device (consecutive arrays of one type into one buffer) travel as one copy.
 */
public final class Transfers {

	private final MemoryPool staging;

	private final Counters uploads = new Counters();

	private final Counters downloads = new Counters();

	private volatile MemoryObserver observer = MemoryObserver.NONE;

	/** Transfers staged in {@code pinnedPool}, a pool of PINNED memory. */
	public Transfers(MemoryPool pinnedPool) {
		if (pinnedPool.kind() != MemoryKind.PINNED) {
			throw new IllegalArgumentException("transfers are staged in a PINNED pool, not " + pinnedPool.kind());
		}
		this.staging = pinnedPool;
	}

	/** Copies {@code array} into {@code target} at {@code byteOffset} and waits until it is there. */
	public void upload(GpuStream stream, Object array, GpuBuffer target, long byteOffset) {
		uploadAsync(stream, List.of(new TransferPart(array, target, byteOffset))).await();
	}

	/** Copies {@code source} from {@code byteOffset} into all of {@code array} and waits until it is there. */
	public void download(GpuStream stream, GpuBuffer source, long byteOffset, Object array) {
		downloadAsync(stream, List.of(new TransferPart(array, source, byteOffset))).await();
	}

	/**
	 * Stages every part's array and enqueues the copies to the device; the arrays may be reused as soon as
	 * this returns, the staging memory goes back to its pool once the copies have run.
	 * @throws IndexOutOfBoundsException if a part does not fit its buffer (nothing is enqueued)
	 */
	public Transfer uploadAsync(GpuStream stream, List<TransferPart> parts) {
		long[] offsets = layOut(parts);
		MemoryObserver.Span span = start(MemoryOperation.Type.UPLOAD, offsets[parts.size()]);
		PooledBuffer staged = stage(offsets[parts.size()], span);
		long start = this.uploads.start(offsets[parts.size()]);
		try {
			for (int i = 0; i < parts.size(); i++) {
				TransferPart part = parts.get(i);
				staged.copyFromArray(offsets[i], part.array(), 0, part.length());
			}
			int copies = enqueue(parts, offsets, (from, bytes) -> stream.copy(staged, offsets[from],
					parts.get(from).buffer(), parts.get(from).byteOffset(), bytes));
			Transfer transfer = new Transfer(stream.record(), copies, () -> this.uploads.complete(start), span);
			staged.closeAfter(stream);
			return transfer;
		}
		catch (RuntimeException ex) {
			staged.closeAfter(stream);
			span.end(ex);
			throw ex;
		}
	}

	/**
	 * Enqueues the copies from the device into staging; {@link Transfer#await()} fills the arrays and
	 * gives the staging memory back.
	 * @throws IndexOutOfBoundsException if a part does not fit its buffer (nothing is enqueued)
	 */
	public Transfer downloadAsync(GpuStream stream, List<TransferPart> parts) {
		long[] offsets = layOut(parts);
		MemoryObserver.Span span = start(MemoryOperation.Type.DOWNLOAD, offsets[parts.size()]);
		PooledBuffer staged = stage(offsets[parts.size()], span);
		long start = this.downloads.start(offsets[parts.size()]);
		try {
			int copies = enqueue(parts, offsets, (from, bytes) -> stream.copy(parts.get(from).buffer(),
					parts.get(from).byteOffset(), staged, offsets[from], bytes));
			return new Transfer(stream.record(), copies, () -> {
				try {
					for (int i = 0; i < parts.size(); i++) {
						TransferPart part = parts.get(i);
						staged.copyToArray(offsets[i], part.array(), 0, part.length());
					}
					this.downloads.complete(start);
				}
				finally {
					staged.close();
				}
			}, span);
		}
		catch (RuntimeException ex) {
			staged.closeAfter(stream);
			span.end(ex);
			throw ex;
		}
	}

	/**
	 * Where each part lies in staging, each aligned to its element size, checking every part against its
	 * buffer first; the last entry is the staging size.
	 */
	private static long[] layOut(List<TransferPart> parts) {
		Objects.requireNonNull(parts, "parts");
		if (parts.isEmpty()) {
			throw new IllegalArgumentException("a transfer needs at least one part");
		}
		long[] offsets = new long[parts.size() + 1];
		long next = 0;
		for (int i = 0; i < parts.size(); i++) {
			TransferPart part = parts.get(i);
			part.buffer().checkRange(part.byteOffset(), part.bytes());
			long align = part.type().bytes();
			next = (next + align - 1) / align * align;
			offsets[i] = next;
			next += part.bytes();
		}
		offsets[parts.size()] = next;
		return offsets;
	}

	/** Enqueues one copy per run of parts adjacent in staging and in the same buffer; answers how many. */
	private static int enqueue(List<TransferPart> parts, long[] offsets, Copy copy) {
		int copies = 0;
		int from = 0;
		long bytes = parts.get(0).bytes();
		for (int i = 1; i <= parts.size(); i++) {
			if (i < parts.size() && adjacent(parts.get(i - 1), offsets[i - 1], parts.get(i), offsets[i])) {
				bytes += parts.get(i).bytes();
				continue;
			}
			if (bytes > 0) {
				copy.run(from, bytes);
				copies++;
			}
			if (i < parts.size()) {
				from = i;
				bytes = parts.get(i).bytes();
			}
		}
		return copies;
	}

	private static boolean adjacent(TransferPart previous, long previousOffset, TransferPart next, long nextOffset) {
		return previous.buffer() == next.buffer() && nextOffset == previousOffset + previous.bytes()
				&& next.byteOffset() == previous.byteOffset() + previous.bytes();
	}

	@FunctionalInterface
	private interface Copy {

		void run(int firstPart, long bytes);

	}

	/** Tells {@code observer} of every transfer from now on, from its start until it is awaited. */
	public void observeWith(MemoryObserver observer) {
		this.observer = Objects.requireNonNull(observer, "observer");
	}

	/** Staging of {@code bytes}; a refusal ends {@code span} with it. */
	private PooledBuffer stage(long bytes, MemoryObserver.Span span) {
		try {
			return this.staging.acquire(Math.max(1, bytes));
		}
		catch (RuntimeException ex) {
			span.end(ex);
			throw ex;
		}
	}

	private MemoryObserver.Span start(MemoryOperation.Type type, long bytes) {
		MemoryObserver observer = this.observer;
		return (observer != MemoryObserver.NONE)
				? observer.start(new MemoryOperation(type, this.staging.name(), this.staging.kind(), bytes))
				: MemoryObserver.Span.NONE;
	}

	/** What this has moved so far. */
	public TransferStatistics statistics() {
		return new TransferStatistics(this.uploads.snapshot(), this.downloads.snapshot());
	}

	/** One direction's counts, apart from the copies themselves. */
	private static final class Counters {

		private final LongAdder transfers = new LongAdder();

		private final LongAdder bytes = new LongAdder();

		private final LongAdder completed = new LongAdder();

		private final LongAdder nanos = new LongAdder();

		long start(long bytes) {
			this.transfers.increment();
			this.bytes.add(bytes);
			return System.nanoTime();
		}

		void complete(long start) {
			this.nanos.add(System.nanoTime() - start);
			this.completed.increment();
		}

		TransferStatistics.Direction snapshot() {
			return new TransferStatistics.Direction(this.transfers.sum(), this.bytes.sum(), this.completed.sum(),
					this.nanos.sum());
		}

	}

}
