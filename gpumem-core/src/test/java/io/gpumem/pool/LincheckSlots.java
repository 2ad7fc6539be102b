package io.gpumem.pool;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The slots a model-checked test's operations fill and empty, each held by one thread at a time while it fills or
 * empties it, so that an operation on a slot another thread is filling sees it as full once it is.
 */
public final class LincheckSlots {

	/** A slot being filled or emptied, taken to every other operation. */
	private static final Object FILLING = new Object();

	private final AtomicReferenceArray<Object> slots;

	public LincheckSlots(int count) {
		this.slots = new AtomicReferenceArray<>(count);
	}

	public int count() {
		return this.slots.length();
	}

	/** Takes an empty slot to fill ({@link #set} ends it): false where it holds something, once filled. */
	public boolean fill(int slot) {
		for (;;) {
			Object now = settled(slot);
			if (now != null) {
				return false;
			}
			if (this.slots.compareAndSet(slot, null, FILLING)) {
				return true;
			}
		}
	}

	/** Takes what a slot holds out to empty it ({@link #set} to null ends it); null where it is empty. */
	public Object take(int slot) {
		Object held;
		do {
			held = settled(slot);
		}
		while (held != null && !this.slots.compareAndSet(slot, held, FILLING));
		return held;
	}

	/** Ends a fill or a take: the slot holds {@code held}, or nothing. */
	public void set(int slot, Object held) {
		this.slots.set(slot, held);
	}

	/** What a slot holds once no thread is filling or emptying it. */
	public Object settled(int slot) {
		Object now;
		while ((now = this.slots.get(slot)) == FILLING) {
			Thread.onSpinWait();
		}
		return now;
	}

}
