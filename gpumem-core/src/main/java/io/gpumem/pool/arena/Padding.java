package io.gpumem.pool.arena;

/**
 * 128 bytes of fields (two cache lines, as the adjacent-line prefetcher fetches them in pairs) between the object
 * header and a subclass's own: two such objects side by side, as the collector copies the elements of one array, keep
 * their lock words apart, and the subclass's fields stay off whatever lies before the object. A subclass whose own
 * fields a lock's holder writes pads their end as well (the pool's stripes and thread states).
 */
@SuppressWarnings("unused")
public abstract class Padding {

	private long p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15, p16;

}
