package io.gpumem.autoconfigure.history;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import io.gpumem.memory.OutOfMemoryDiagnostic;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.OutOfMemoryObserver;
import io.gpumem.pool.PoolSnapshot;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.diagnostics.PoolHistory;

/**
 * Writes out-of-memory failures to {@code gpumem.history.oom-dump-dir}, each as one JSON file (the failure with
 * the pool's largest holders, the pool's statistics, its memory map and its recent history), at most one a second
 * per pool, and logs its path at WARN.
 */
public class OutOfMemoryDumps implements OutOfMemoryObserver {

	private static final Log logger = LogFactory.getLog(OutOfMemoryDumps.class);

	private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS")
		.withZone(ZoneOffset.UTC);

	/** How long after a pool's report no other of that pool is written. */
	private static final Duration QUIET = Duration.ofSeconds(1);

	private final Path directory;

	private final JsonMapper json;

	private final Map<String, Instant> lastWritten = new ConcurrentHashMap<>();

	public OutOfMemoryDumps(Path directory, JsonMapper json) {
		this.directory = directory;
		this.json = json;
	}

	/** Writes the report, unless one of this pool's was written less than a second ago: a burst writes one. */
	@Override
	public void observe(MemoryPool pool, OutOfMemoryDiagnostic report) {
		Instant now = Instant.now();
		Instant last = this.lastWritten.get(pool.name());
		if (last != null && last.plus(QUIET).isAfter(now)) {
			return;
		}
		this.lastWritten.put(pool.name(), now);
		try {
			Path file = this.directory.resolve("gpumem-oom-" + pool.name() + "-" + STAMP.format(now) + ".json");
			Files.createDirectories(this.directory);
			this.json.writeValue(file.toFile(), new Dump(pool.name(), now, report, pool.statistics(),
					pool.snapshot().orElse(null), pool.history().orElse(null)));
			logger.warn("Pool '" + pool.name() + "' ran out of memory; its report is in " + file);
		}
		catch (RuntimeException | IOException ex) {
			logger.warn("Could not write the out-of-memory report of pool '" + pool.name() + "' to " + this.directory,
					ex);
		}
	}

	/**
	 * What one dump holds.
	 *
	 * @param pool the pool that failed
	 * @param at when
	 * @param failure the failure, as its exception's message says it, with the largest holders
	 * @param statistics the pool's statistics then
	 * @param snapshot the pool's memory map then
	 * @param history the pool's recent events, the failure last
	 */
	public record Dump(String pool, Instant at, OutOfMemoryDiagnostic failure, PoolStatistics statistics,
			@Nullable PoolSnapshot snapshot, @Nullable PoolHistory history) {
	}

}
