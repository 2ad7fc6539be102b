package io.gpumem.pool.diagnostics;

import java.util.Objects;

import io.gpumem.config.InvalidSettingException;

/**
 * What a pool's history keeps: which buffers it records, and how many events, the most recent, it holds.
 *
 * @param buffers which buffers' acquire and close are recorded, and whose acquiring frames are kept
 * @param events how many events the history holds at most; 0 keeps none (acquiring frames are still recorded for
 * out-of-memory reports)
 */
public record HistoryConfig(BufferRecording buffers, int events) {

	/** How many events a history keeps by default. */
	public static final int DEFAULT_EVENTS = 4096;

	/** Buffers of 1 MiB or more, and the last {@value #DEFAULT_EVENTS} events. */
	public static final HistoryConfig DEFAULT = new HistoryConfig(BufferRecording.LARGE, DEFAULT_EVENTS);

	public HistoryConfig {
		Objects.requireNonNull(buffers, "buffers");
		if (events < 0) {
			throw new InvalidSettingException("history.events", events, "must not be negative");
		}
	}

}
