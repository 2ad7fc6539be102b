package io.gpumem.reduction;

import java.util.Objects;

import io.gpumem.memory.ElementType;

/**
 * What a reduction buffer is cached by: its element type, slot count and op.
 *
 * @param type the element type of the slots
 * @param slots how many partial results the buffer holds
 * @param op the reduction, which fixes the identity the slots start at
 */
public record ReductionKey(ElementType type, int slots, ReductionOp op) {

	public ReductionKey {
		Objects.requireNonNull(type, "element type");
		Objects.requireNonNull(op, "reduction op");
		if (slots <= 0) {
			throw new IllegalArgumentException("a reduction buffer needs at least one slot, not " + slots);
		}
		op.identityBits(type);
	}

	/** The buffer's size in bytes. */
	public long bytes() {
		return this.type.byteSize(this.slots);
	}

}
