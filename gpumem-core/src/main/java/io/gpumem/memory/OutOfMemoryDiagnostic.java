package io.gpumem.memory;

import java.util.List;

/**
 * What was known when an allocation was refused: the figures PyTorch's out-of-memory message gives.
 *
 * @param kind the kind of memory asked for
 * @param requestedBytes bytes asked for (after rounding up to a size class)
 * @param capacityBytes the device's capacity, or -1 if unknown
 * @param freeBytes the device's free bytes, or -1 if unknown
 * @param inUseBytes bytes in use by this process's buffers, or -1 if unknown
 * @param pendingBytes bytes of buffers closed after stream work that has not completed yet, which come back
 * when it has, or -1 if unknown
 * @param cachedBytes bytes cached (reserved but free) by this process's pools, or -1 if unknown
 * @param limitBytes the byte budget this process may hold, or -1 if none
 * @param largestClassBytes the largest pool size class, or -1 where no pool is involved
 * @param largestFreeBlockBytes the pool's largest run of free bytes in one segment, or -1 where no pool is
 * involved
 * @param addressBytes the addresses the pool's expandable segments reserve, of which {@code cachedBytes} and
 * {@code inUseBytes} are mapped: 0 where it has none, -1 where no pool is involved
 * @param holders the pool's largest holders of lent memory by acquiring site, largest first, where recorded
 * @param reason the layer that refused and why
 */
public record OutOfMemoryDiagnostic(MemoryKind kind, long requestedBytes, long capacityBytes, long freeBytes,
		long inUseBytes, long pendingBytes, long cachedBytes, long limitBytes, long largestClassBytes,
		long largestFreeBlockBytes, long addressBytes, List<MemoryHolder> holders, String reason) {

	public OutOfMemoryDiagnostic {
		holders = List.copyOf(holders);
	}

	/** A diagnostic with only what an allocator knows; pools fill in the rest. */
	public static OutOfMemoryDiagnostic of(MemoryKind kind, long requestedBytes, MemoryInfo info, long limitBytes,
			String reason) {
		return new OutOfMemoryDiagnostic(kind, requestedBytes, (info != null) ? info.totalBytes() : -1,
				(info != null) ? info.freeBytes() : -1, -1, -1, -1, limitBytes, -1, -1, -1, List.of(), reason);
	}

	/** This diagnostic with the pool's view of the process added. */
	public OutOfMemoryDiagnostic withPool(long inUseBytes, long pendingBytes, long cachedBytes,
			long largestClassBytes) {
		return new OutOfMemoryDiagnostic(this.kind, this.requestedBytes, this.capacityBytes, this.freeBytes,
				inUseBytes, pendingBytes, cachedBytes, this.limitBytes, largestClassBytes, this.largestFreeBlockBytes,
				this.addressBytes, this.holders, this.reason);
	}

	/**
	 * This diagnostic with the pool's largest free block, the addresses its expandable segments reserve (0 for
	 * none) and its largest holders of lent memory.
	 */
	public OutOfMemoryDiagnostic withHolders(long largestFreeBlockBytes, long addressBytes,
			List<MemoryHolder> holders) {
		return new OutOfMemoryDiagnostic(this.kind, this.requestedBytes, this.capacityBytes, this.freeBytes,
				this.inUseBytes, this.pendingBytes, this.cachedBytes, this.limitBytes, this.largestClassBytes,
				largestFreeBlockBytes, addressBytes, holders, this.reason);
	}

	/** This diagnostic saying that the request waited {@code millis} ms for memory to be returned, in vain. */
	public OutOfMemoryDiagnostic withWait(long millis) {
		return withReason("waited " + millis + " ms for memory to be returned");
	}

	/** This diagnostic with {@code more} added to its reason. */
	public OutOfMemoryDiagnostic withReason(String more) {
		return new OutOfMemoryDiagnostic(this.kind, this.requestedBytes, this.capacityBytes, this.freeBytes,
				this.inUseBytes, this.pendingBytes, this.cachedBytes, this.limitBytes, this.largestClassBytes,
				this.largestFreeBlockBytes, this.addressBytes, this.holders,
				(this.reason == null || this.reason.isEmpty()) ? more : this.reason + "; " + more);
	}

	/** Whether no amount of memory given back could serve the request: it is larger than the capacity or the limit. */
	public boolean exceedsCapacity() {
		return (this.capacityBytes >= 0 && this.requestedBytes > this.capacityBytes)
				|| (this.limitBytes >= 0 && this.requestedBytes > this.limitBytes);
	}

	/** The message of the exception, one sentence per known figure. */
	public String describe() {
		StringBuilder message = new StringBuilder("Out of ").append(this.kind).append(" memory: tried to allocate ")
			.append(ByteSizes.format(this.requestedBytes)).append('.');
		if (this.capacityBytes >= 0) {
			message.append(" The device has a total capacity of ").append(ByteSizes.format(this.capacityBytes));
			if (this.freeBytes >= 0) {
				message.append(" of which ").append(ByteSizes.format(this.freeBytes)).append(" is free");
			}
			message.append('.');
		}
		if (this.inUseBytes >= 0) {
			message.append(" This process has ").append(ByteSizes.format(this.inUseBytes)).append(" in use");
			if (this.pendingBytes > 0) {
				message.append(", ").append(ByteSizes.format(this.pendingBytes))
					.append(" closed after stream work that has not completed");
			}
			if (this.cachedBytes >= 0) {
				message.append(" and ").append(ByteSizes.format(this.cachedBytes))
					.append(" cached by its pools but unallocated");
			}
			message.append('.');
		}
		if (this.limitBytes >= 0) {
			message.append(" Its limit is ").append(ByteSizes.format(this.limitBytes)).append('.');
		}
		if (this.largestClassBytes >= 0) {
			message.append(" The largest pool size class is ").append(ByteSizes.format(this.largestClassBytes))
				.append('.');
		}
		if (this.largestFreeBlockBytes >= 0) {
			message.append(" The pool's largest free block is ").append(ByteSizes.format(this.largestFreeBlockBytes))
				.append('.');
		}
		if (this.addressBytes > 0) {
			message.append(" Its expandable segments reserve ").append(ByteSizes.format(this.addressBytes))
				.append(" of addresses, with every granule mapped but those free.");
		}
		if (!this.holders.isEmpty()) {
			message.append(" The largest holders:");
			this.holders.forEach((holder) -> message.append(' ').append(holder.describe()).append(';'));
			message.setCharAt(message.length() - 1, '.');
		}
		if (this.reason != null && !this.reason.isEmpty()) {
			message.append(" (").append(this.reason).append(')');
		}
		return message.toString();
	}

}
