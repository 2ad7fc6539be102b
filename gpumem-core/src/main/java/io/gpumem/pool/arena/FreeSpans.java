package io.gpumem.pool.arena;

import java.util.TreeSet;

/**
 * The free spans of an {@link Arena}: found best fit, cut to size from the front (or in a range, from the back where
 * that maps fewer granules), and coalesced with their free neighbours when freed. Guarded by the arena's lock.
 */
final class FreeSpans {

	private final TreeSet<Span> free = new TreeSet<>(Span.BEST_FIT);

	private final Span probe = new Span(new Span.Segment(null, null, 0, this, Long.MIN_VALUE), 0, 0);

	/**
	 * The free span a request of {@code size} bytes is cut from: the best fit, where {@code mappedOnly} only if its
	 * bytes where the request lies ({@link #placement}) are mapped; null when none fits.
	 */
	Span fit(long size, boolean mappedOnly) {
		this.probe.size = size;
		Span fit = this.free.ceiling(this.probe);
		if (fit == null || !mappedOnly || fit.segment.granules == null) {
			return fit;
		}
		long at = placement(fit, size);
		return fit.segment.granules.mapped(at, at + size) ? fit : null;
	}

	/**
	 * Where in free span {@code span} a request of {@code size} bytes lies: at its front, or in a range at its back
	 * where that touches fewer unmapped granules, as when the back ends in a partly lent granule the front does not
	 * reach, so that its free bytes serve before a granule more is mapped.
	 */
	private static long placement(Span span, long size) {
		Granules granules = span.segment.granules;
		long front = (granules != null) ? granules.unmappedBytes(span.offset, span.offset + size) : 0;
		long back = span.offset + span.size - size;
		return (front != 0 && granules.unmappedBytes(back, back + size) < front) ? back : span.offset;
	}

	/** Adds a new segment's span, all free. */
	void add(Span whole) {
		whole.free = true;
		this.free.add(whole);
	}

	/** Takes a whole free segment's span out. */
	void remove(Span whole) {
		this.free.remove(whole);
	}

	/**
	 * Cuts {@code size} bytes from free span {@code span} to lend, where {@link #placement} puts them, leaving the
	 * rest free.
	 */
	Span cut(Span span, long size) {
		remove(span);
		long rest = span.size - size;
		if (placement(span, size) != span.offset) {
			Span lent = new Span(span.segment, span.offset + rest, size);
			lent.freeSince = span.freeSince;
			lent.link(span.next);
			span.link(lent);
			span.size = rest;
			add(span);
			return lent;
		}
		if (rest >= Arena.ALIGNMENT) {
			Span remainder = new Span(span.segment, span.offset + size, rest);
			remainder.prev = span;
			remainder.link(span.next);
			span.next = remainder;
			span.size = size;
			remainder.freeSince = span.freeSince;
			add(remainder);
		}
		span.free = false;
		return span;
	}

	/**
	 * Frees a lent span at {@code stamp}, coalescing it with its free neighbours, free since the later of its stamp and
	 * theirs (a span whose block could not be made is freed at its old stamp); its granules are free since then.
	 */
	void free(Span span, long stamp) {
		if (span.free) {
			throw new IllegalStateException("span of " + span.size + " bytes freed twice");
		}
		if (span.segment.granules != null) {
			span.segment.granules.freed(span.offset, span.offset + span.size, stamp);
		}
		Span merged = span;
		long since = stamp;
		Span before = span.prev;
		if (before != null && before.free) {
			remove(before);
			before.size += merged.size;
			before.link(merged.next);
			merged = before;
			since = Math.max(since, before.freeSince);
		}
		Span after = merged.next;
		if (after != null && after.free) {
			remove(after);
			merged.size += after.size;
			merged.link(after.next);
			since = Math.max(since, after.freeSince);
		}
		merged.freeSince = since;
		add(merged);
	}

}
