package io.gpumem.device;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.IntStream;

import io.gpumem.config.InvalidSettingException;

/**
 * Which devices gpumem opens ({@code gpumem.devices}): every device of the backend, or a list of
 * ordinals, the first of which is the primary device.
 */
public final class DeviceSelection {

	private static final String SETTING = "devices";

	private final List<Integer> ordinals;

	private DeviceSelection(List<Integer> ordinals) {
		this.ordinals = ordinals;
	}

	/** Every device the backend has, in ordinal order. */
	public static DeviceSelection all() {
		return new DeviceSelection(null);
	}

	/**
	 * The devices of these ordinals, in this order.
	 * @throws InvalidSettingException if there is none, one is negative or one is listed twice
	 */
	public static DeviceSelection of(List<Integer> ordinals) {
		if (ordinals.isEmpty()) {
			throw new InvalidSettingException(SETTING, ordinals, "must name at least one device, or be 'all'");
		}
		for (int i = 0; i < ordinals.size(); i++) {
			int ordinal = ordinals.get(i);
			if (ordinal < 0) {
				throw new InvalidSettingException(SETTING + "[" + i + "]", ordinal, "must be 0 or more");
			}
			if (ordinals.indexOf(ordinal) != i) {
				throw new InvalidSettingException(SETTING + "[" + i + "]", ordinal, "lists a device twice");
			}
		}
		return new DeviceSelection(List.copyOf(ordinals));
	}

	/**
	 * The selection a property's values spell: {@code all} alone, or device ordinals.
	 * @throws InvalidSettingException if a value is neither
	 */
	public static DeviceSelection parse(List<String> values) {
		if (values.size() == 1 && values.get(0).trim().toLowerCase(Locale.ROOT).equals("all")) {
			return all();
		}
		List<Integer> ordinals = new ArrayList<>();
		for (int i = 0; i < values.size(); i++) {
			try {
				ordinals.add(Integer.parseInt(values.get(i).trim()));
			}
			catch (NumberFormatException ex) {
				throw new InvalidSettingException(SETTING + "[" + i + "]", values.get(i),
						"must be a device ordinal, or the whole list 'all'");
			}
		}
		return of(ordinals);
	}

	/**
	 * The ordinals selected of a backend with {@code available} devices.
	 * @param backend the backend in words, for the error, as in {@code the CUDA driver found 2 device(s)}
	 * @throws InvalidSettingException if an ordinal names no device
	 */
	public List<Integer> resolve(int available, String backend) {
		if (this.ordinals == null) {
			return IntStream.range(0, available).boxed().toList();
		}
		for (int i = 0; i < this.ordinals.size(); i++) {
			if (this.ordinals.get(i) >= available) {
				throw new InvalidSettingException(SETTING + "[" + i + "]", this.ordinals.get(i),
						"must name a device that exists: " + backend);
			}
		}
		return this.ordinals;
	}

	/** The fewest devices a backend needs for this selection: one more than the highest ordinal listed. */
	public int needs() {
		return (this.ordinals != null) ? this.ordinals.stream().mapToInt(Integer::intValue).max().orElse(0) + 1 : 1;
	}

	/** The device probed first: the first listed, or 0 for every device. */
	public int first() {
		return (this.ordinals != null) ? this.ordinals.get(0) : 0;
	}

	@Override
	public String toString() {
		return (this.ordinals != null) ? this.ordinals.toString() : "all";
	}

}
