package io.gpumem.pool;

import java.util.TreeSet;

/**
 * The free spans of an {@link Arena}: found best fit, cut to size from the front, and coalesced with their free
 * neighbours when freed. Guarded by the arena's lock.
 */
final class FreeSpans {

	/** How many free spans above the best fit are looked through for one already mapped, before mapping more. */
	private static final int MAPPED_FIT_LOOKAHEAD = 8;

	private final TreeSet<Span> free = new TreeSet<>(Span.BEST_FIT);

	private final Span probe = new Span(new Span.Segment(null, null, null, 0, this, Long.MIN_VALUE), 0, 0);

	/**
	 * The free span a request of {@code size} bytes is cut from: the best fit, or in a range a near one whose bytes
	 * are mapped, the best fit that is not only where {@code mappedOnly} is false; null when none fits.
	 */
	Span fit(long size, boolean mappedOnly) {
		this.probe.size = size;
		Span fit = this.free.ceiling(this.probe);
		if (fit == null || fit.segment.granules == null) {
			return fit;
		}
		Span candidate = fit;
		for (int i = 0; candidate != null && i < MAPPED_FIT_LOOKAHEAD; i++) {
			if (candidate.segment.granules.mapped(candidate.offset, candidate.offset + size)) {
				return candidate;
			}
			candidate = this.free.higher(candidate);
		}
		return mappedOnly ? null : fit;
	}

	/**
	 * The bytes of granules a request of {@code size} bytes takes, over expandable segments: those its fit touches
	 * unmapped, and the mapped ones lying wholly in the fit that its cut leaves free no more; where none fits, the
	 * granules of {@code granule} bytes a new range maps for it.
	 */
	long mapping(long size, long granule) {
		Span fit = fit(size, false);
		if (fit == null) {
			return (size + granule - 1) / granule * granule;
		}
		Granules granules = fit.segment.granules;
		long end = fit.offset + fit.size;
		return granules.unmappedBytes(fit.offset, fit.offset + size) + granules.mappedWithin(fit.offset, end)
				- granules.mappedWithin(fit.offset + size, end);
	}

	/** Bytes of the mapped granules lying wholly in these free spans, which must be in expandable segments. */
	long mappedFree() {
		long bytes = 0;
		for (Span span : this.free) {
			bytes += span.segment.granules.mappedWithin(span.offset, span.offset + span.size);
		}
		return bytes;
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

	/** Cuts {@code size} bytes from the front of free span {@code span} to lend, leaving the rest free. */
	Span cut(Span span, long size) {
		remove(span);
		long rest = span.size - size;
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
