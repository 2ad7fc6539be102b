package io.gpumem.pool;

/**
 * Ready-made pool settings: the measured default, and the seed runtime's presets for graph analytics
 * (many 256 B and 1 KiB buffers) and simulation (many 4 KiB and 16 KiB buffers).
 */
public enum PoolPreset {

	/** The {@linkplain SizeClassLadder#defaultLadder() default ladder}, nothing warmed, 512 MiB cached at most. */
	DEFAULT(SizeClassLadder.defaultLadder(), null, null, 512L << 20),

	/** The seed's six classes from 256 B to 256 KiB, weighted to the small ones. */
	GRAPH_ANALYTICS(SeedLadder.LADDER, new int[] { 1000, 500, 100, 20, 5, 2 },
			new int[] { 10_000, 5000, 1000, 200, 50, 20 }, 512L << 20),

	/** The seed's six classes from 256 B to 256 KiB, weighted to 4 KiB and 16 KiB. */
	SIMULATION(SeedLadder.LADDER, new int[] { 50, 100, 500, 250, 20, 5 },
			new int[] { 500, 1000, 5000, 2500, 200, 50 }, 1L << 30);

	private final SizeClassLadder ladder;

	private final int[] initialCounts;

	private final int[] maxCounts;

	private final long maxCachedBytes;

	PoolPreset(SizeClassLadder ladder, int[] initialCounts, int[] maxCounts, long maxCachedBytes) {
		this.ladder = ladder;
		this.initialCounts = initialCounts;
		this.maxCounts = maxCounts;
		this.maxCachedBytes = maxCachedBytes;
	}

	/** The preset's name as written in configuration, such as {@code graph-analytics}. */
	public String configName() {
		return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
	}

	/** The preset named as in configuration ({@code graph-analytics}) or as the constant. */
	public static PoolPreset fromConfigName(String name) {
		for (PoolPreset preset : values()) {
			if (preset.configName().equalsIgnoreCase(name) || preset.name().equalsIgnoreCase(name)) {
				return preset;
			}
		}
		throw new IllegalArgumentException("unknown pool preset '" + name + "': must be one of default, "
				+ "graph-analytics, simulation");
	}

	void applyTo(PoolConfig.Builder builder) {
		builder.sizeClasses(this.ladder).maxCachedBytes(this.maxCachedBytes);
		for (int i = 0; i < this.ladder.count(); i++) {
			if (this.initialCounts != null) {
				builder.warm(this.ladder.size(i), this.initialCounts[i]);
			}
			if (this.maxCounts != null) {
				builder.maxCachedBuffers(this.ladder.size(i), this.maxCounts[i]);
			}
		}
	}

	/**
	 * The seed's ladder: 256 B, 1 KiB, 4 KiB, 16 KiB, 64 KiB, 256 KiB. Its 256 KiB class is above the free lists'
	 * classes: its warm count is free room in the arena, and its most cached buffers bound nothing.
	 */
	private static final class SeedLadder {

		static final SizeClassLadder LADDER = SizeClassLadder.of(256, 1024, 4096, 16384, 65536, 262144);

	}

}
