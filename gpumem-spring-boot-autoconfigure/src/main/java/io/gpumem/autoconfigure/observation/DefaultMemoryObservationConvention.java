package io.gpumem.autoconfigure.observation;

import java.util.Locale;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

import io.gpumem.observation.MemoryOperation;

/**
 * How gpumem's memory observations are named and tagged, unless a {@code GlobalObservationConvention} for
 * {@link MemoryObservationContext} says otherwise: {@code gpumem.acquire} for a pool's miss, tagged with the
 * pool and its device, and {@code gpumem.transfer} for a staged transfer, tagged with the device and the direction, as
 * gpumem's meters are; the bytes as a high-cardinality key, which goes to traces and not to meters.
 */
public final class DefaultMemoryObservationConvention implements ObservationConvention<MemoryObservationContext> {

	/** The convention of {@code gpumem.acquire}. */
	public static final DefaultMemoryObservationConvention ACQUIRE = new DefaultMemoryObservationConvention(
			"gpumem.acquire");

	/** The convention of {@code gpumem.transfer}. */
	public static final DefaultMemoryObservationConvention TRANSFER = new DefaultMemoryObservationConvention(
			"gpumem.transfer");

	private final String name;

	private DefaultMemoryObservationConvention(String name) {
		this.name = name;
	}

	/** The convention of {@code operation}'s observation. */
	static DefaultMemoryObservationConvention of(MemoryOperation operation) {
		return (operation.type() == MemoryOperation.Type.ACQUIRE) ? ACQUIRE : TRANSFER;
	}

	@Override
	public String getName() {
		return this.name;
	}

	@Override
	public String getContextualName(MemoryObservationContext context) {
		MemoryOperation operation = context.getOperation();
		return (this == ACQUIRE) ? "gpumem acquire " + operation.pool() : "gpumem " + direction(operation);
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(MemoryObservationContext context) {
		MemoryOperation operation = context.getOperation();
		return (this == ACQUIRE) ? KeyValues.of("pool", operation.pool(), "device", context.getDevice())
				: KeyValues.of("device", context.getDevice(), "direction", direction(operation));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(MemoryObservationContext context) {
		return KeyValues.of("gpumem.bytes", Long.toString(context.getOperation().bytes()));
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof MemoryObservationContext;
	}

	private static String direction(MemoryOperation operation) {
		return operation.type().name().toLowerCase(Locale.ROOT);
	}

}
