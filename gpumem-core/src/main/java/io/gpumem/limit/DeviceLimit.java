package io.gpumem.limit;

import java.util.List;
import java.util.Objects;
import java.util.OptionalDouble;

import io.gpumem.allocator.MemoryBudget;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.MemoryInfo;

/**
 * The most memory of one device this process may use, and why: the smallest of the card's memory (or its MIG
 * instance's) and every limit a source states, read once by {@link DeviceLimits}. The device's budget is
 * {@code memory-fraction} of it, and its pressure is what the process uses over it.
 *
 * @param device the device as the sources saw it
 * @param limitBytes the limit
 * @param source where the limit comes from, as in {@code CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)} or {@code the card}
 * @param shared whether a source other than the card set the limit: the process has a share of the device
 * @param protectedBytes the memory protected from reclaim below the limit ({@code dmem.min}), above which pressure
 * shrinks the pools, or 0 for none
 * @param protectedSource where {@code protectedBytes} comes from, or {@code null} for none
 * @param contextBytes what the driver showed in use of the share when the device was opened, where it reports the
 * share itself (HAMi's hook answers the limit as the total): the context's own memory, which the budget leaves out;
 * 0 otherwise
 * @param readings every figure the sources stated, each taken as at most the card
 */
public record DeviceLimit(SharedDevice device, long limitBytes, String source, boolean shared, long protectedBytes,
		String protectedSource, long contextBytes, List<LimitReading> readings) {

	public DeviceLimit {
		Objects.requireNonNull(device, "device");
		Objects.requireNonNull(source, "source");
		readings = List.copyOf(readings);
		if (limitBytes <= 0 || limitBytes > device.cardBytes()) {
			throw new IllegalArgumentException("a limit lies in (0, the card's " + device.cardBytes() + " bytes]: "
					+ limitBytes);
		}
	}

	/** The card, as the log and the endpoint name it: {@code the card} or {@code the MIG instance MIG-…}. */
	static String card(SharedDevice device) {
		return device.migInstance() ? "the MIG instance " + device.visibleAs() : "the card";
	}

	/**
	 * {@code fraction} of the limit, less {@link #contextBytes()}: the budget every pool of the device draws on, its
	 * origin naming the limit's source.
	 * @throws io.gpumem.config.InvalidSettingException if {@code fraction} is not in (0, 1]
	 */
	public MemoryBudget budget(double fraction) {
		return MemoryBudget.ofFraction(this.limitBytes, fraction,
				"the limit of " + ByteSizes.format(this.limitBytes) + " from " + this.source)
			.less(this.contextBytes, "the driver showed in use at startup");
	}

	/**
	 * The device's memory as pressure weighs it: the card's figures where the card is the limit and nothing is
	 * protected (every process's use counts); otherwise {@code heldBytes} (what gpumem holds on the device) and
	 * {@link #contextBytes()} against the limit, since the card's figures count other pods' memory, which neither a
	 * share nor a protected amount is about.
	 */
	public MemoryInfo memoryInfo(MemoryInfo card, long heldBytes) {
		if (!this.shared && this.protectedBytes == 0) {
			return card;
		}
		long used = Math.min(this.limitBytes, Math.max(0, heldBytes) + this.contextBytes);
		return new MemoryInfo(this.limitBytes - used, this.limitBytes);
	}

	/**
	 * The utilization of the limit above which pressure shrinks the pools, from {@link #protectedBytes()}; none
	 * without.
	 */
	public OptionalDouble protectedUtilization() {
		return (this.protectedBytes > 0) ? OptionalDouble.of((double) this.protectedBytes / this.limitBytes)
				: OptionalDouble.empty();
	}

	/**
	 * The limit in words, as in {@code limit 300.00 MiB from CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi; the card has
	 * 1.00 GiB)}.
	 */
	public String describe() {
		String card = card(this.device);
		if (!this.shared) {
			return "limit " + ByteSizes.format(this.limitBytes) + ", " + card + "'s";
		}
		return "limit " + ByteSizes.format(this.limitBytes) + " from " + this.source.replaceFirst("\\)$", "")
				+ "; " + card + " has " + ByteSizes.format(this.device.cardBytes()) + ")";
	}

	/**
	 * The line logged once at startup: the limit, its source, the other sources' figures, the protected amount and the
	 * budget.
	 */
	public String describe(MemoryBudget budget, double fraction) {
		StringBuilder line = new StringBuilder("Device ").append(this.device.ordinal());
		if (this.device.visibleAs() != null) {
			line.append(" (visible as ").append(this.device.visibleAs()).append(')');
		}
		line.append(": ").append(describe());
		this.readings.stream()
			.filter((reading) -> reading.kind() != LimitReading.Kind.PROTECTED && !reading.source().equals(this.source))
			.forEach((reading) -> line.append("; ")
				.append(reading.source())
				.append(" states ")
				.append(ByteSizes.format(reading.bytes())));
		if (this.protectedBytes > 0) {
			line.append("; pressure shrinks above the ")
				.append(ByteSizes.format(this.protectedBytes))
				.append(" protected by ")
				.append(this.protectedSource);
		}
		line.append("; memory-fraction ")
			.append(fraction)
			.append(": budget ")
			.append(ByteSizes.format(budget.limitBytes()));
		if (this.contextBytes > 0) {
			boolean left = budget.limitBytes() < MemoryBudget.ofFraction(this.limitBytes, fraction).limitBytes();
			line.append(left ? ", less the " : ", not less the ")
				.append(ByteSizes.format(this.contextBytes))
				.append(" the driver showed in use at startup")
				.append(left ? "" : ", which would leave no budget");
		}
		return line.toString();
	}

}
