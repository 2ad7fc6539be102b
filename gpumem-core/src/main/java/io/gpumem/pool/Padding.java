package io.gpumem.pool;

/**
 * 128 bytes of fields (two cache lines, as the adjacent-line prefetcher fetches them in pairs) before a subclass's
 * own, which the object header precedes: what a lock's holder writes in the object, its lock word included, stays
 * off whatever the collector puts before the object's fields, another thread's object among them.
 */
@SuppressWarnings("unused")
abstract class Padding {

	private long p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15, p16;

}
