package io.gpumem.autoconfigure;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The pools a device may have, each named once: the primary device's pools go by these names ({@code device},
 * {@code pinned}), another device's by its own ({@code device1.device}).
 */
public enum PoolName {

	/** The device pool, over the device's memory within its budget. */
	DEVICE(true),

	/** The pinned pool, page-locked host memory that transfers stage through. */
	PINNED(true),

	/** The reduction cache, over the device pool. */
	REDUCTION(false),

	/** The unified pool, managed memory within the device's budget. */
	UNIFIED(true);

	private final boolean allocates;

	PoolName(boolean allocates) {
		this.allocates = allocates;
	}

	/** The name of this pool on the primary device, as {@code gpumem.fault-injection.pools} names it. */
	String part() {
		return name().toLowerCase(Locale.ROOT);
	}

	/** The name of this pool on the device of {@code ordinal}, the primary device or another. */
	String on(int ordinal, boolean primary) {
		return primary ? part() : "device" + ordinal + "." + part();
	}

	/** Whether this pool draws on an allocator of its own, which fault injection can refuse. */
	boolean allocates() {
		return this.allocates;
	}

	/** The names of the pools that draw on an allocator of their own. */
	static List<String> allocating() {
		return Arrays.stream(values()).filter(PoolName::allocates).map(PoolName::part).toList();
	}

}
