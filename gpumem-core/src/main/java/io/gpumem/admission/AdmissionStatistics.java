package io.gpumem.admission;

/**
 * The figures of a {@link GpuAdmission}, read without the lock a request takes.
 *
 * @param name the device or group admitted to
 * @param maxConcurrent the most permits open at once, 0 for no limit
 * @param active permits open
 * @param waiting requests waiting in line
 * @param claimedBytes bytes of the open permits
 * @param lentBytes bytes of the blocks lent on them
 * @param admitted permits handed out so far
 * @param waits requests that had to wait, admitted in the end or not
 * @param timeouts waits that ran out (or were interrupted), each turned away
 * @param refusals requests larger than the pool's reach, refused at once
 * @param leaked permits reclaimed after becoming unreachable without close
 * @param waitNanos time spent in line, all requests together
 */
public record AdmissionStatistics(String name, int maxConcurrent, int active, int waiting, long claimedBytes,
		long lentBytes, long admitted, long waits, long timeouts, long refusals, long leaked, long waitNanos) {

}
