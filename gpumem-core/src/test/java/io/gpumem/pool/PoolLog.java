package io.gpumem.pool;

import java.text.MessageFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What the pools (or another class of the core) log while it is open, at a level or above, each message formatted with
 * its parameters.
 */
public final class PoolLog implements AutoCloseable {

	private final Logger logger;

	private final List<String> messages = new CopyOnWriteArrayList<>();

	private final List<Throwable> thrown = new CopyOnWriteArrayList<>();

	private final boolean printed;

	private final Handler handler;

	private PoolLog(Class<?> source, Level level) {
		this.logger = Logger.getLogger(source.getName());
		this.handler = new Handler() {

			@Override
			public void publish(LogRecord record) {
				if (record.getLevel().intValue() >= level.intValue()) {
					PoolLog.this.messages.add((record.getParameters() == null) ? record.getMessage()
							: MessageFormat.format(record.getMessage(), record.getParameters()));
					if (record.getThrown() != null) {
						PoolLog.this.thrown.add(record.getThrown());
					}
				}
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}

		};
		this.logger.addHandler(this.handler);
		this.printed = this.logger.getUseParentHandlers();
	}

	/** Starts capturing what the pools log at {@code level} or above. */
	public static PoolLog capture(Level level) {
		return capture(StratifiedMemoryPool.class, level);
	}

	/** Starts capturing what {@code source} logs at {@code level} or above. */
	public static PoolLog capture(Class<?> source, Level level) {
		return new PoolLog(source, level);
	}

	/** Keeps what is captured from the console until closed: a test that logs on purpose, many times. */
	public PoolLog quiet() {
		this.logger.setUseParentHandlers(false);
		return this;
	}

	/** The failures logged with the messages captured so far, in order. */
	public List<Throwable> thrown() {
		return List.copyOf(this.thrown);
	}

	/** The messages captured so far, in order. */
	public List<String> messages() {
		return List.copyOf(this.messages);
	}

	@Override
	public void close() {
		this.logger.removeHandler(this.handler);
		this.logger.setUseParentHandlers(this.printed);
	}

}
