package io.gpumem.autoconfigure.endpoint;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.SizeClassStatistics;
import io.gpumem.pool.StratifiedMemoryPool;

/** The endpoint over HTTP, with the figures of fixed segments: allocations of 2 MiB, blocks above the top class. */
@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=256MB", "gpumem.device-pool.warm[64KB]=4",
				"gpumem.device-pool.segments=fixed",
				"management.endpoints.web.exposure.include=gpumem,health,metrics",
				"management.endpoint.gpumem.access=unrestricted",
				"management.endpoint.health.show-details=always", "spring.mvc.problemdetails.enabled=true" })
@AutoConfigureRestTestClient
class GpumemEndpointHttpTest {

	/** A buffer whose acquiring frames the default recording always keeps. */
	private static final int RECORDED_WITH_FRAMES = 16 << 20;

	@Autowired
	private RestTestClient client;

	@Autowired
	private GpuAdmission admission;

	@Autowired
	@Qualifier("gpumemDevicePool")
	private StratifiedMemoryPool devicePool;

	@Test
	void readsTheBackendDevicePressureAndEveryPool() {
		try (PooledBuffer held = this.devicePool.acquire(3L << 20)) {
			PoolStatistics stats = lentAndCached();
			this.client.get()
				.uri("/actuator/gpumem")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.backend").isEqualTo("host")
				.jsonPath("$.device.id").isEqualTo(0)
				.jsonPath("$.device.name").isNotEmpty()
				.jsonPath("$.device.totalBytes").isEqualTo(256 * 1024 * 1024)
				.jsonPath("$.device.limitBytes").isEqualTo(256 * 1024 * 1024)
				.jsonPath("$.device.limitSource").isEqualTo("the card")
				.jsonPath("$.device.freeBytes")
				.value((Number free) -> assertThat(free.longValue()).isPositive()
					.isLessThanOrEqualTo(256L * 1024 * 1024 - stats.reservedBytes()))
				.jsonPath("$.pressure.level").isEqualTo("NORMAL")
				.jsonPath("$.pressure.utilization").isNumber()
				.jsonPath("$.pools.device.kind").isEqualTo("DEVICE")
				.jsonPath("$.pools.pinned.kind").isEqualTo("PINNED")
				.jsonPath("$.pools.reduction.kind").isEqualTo("DEVICE")
				.jsonPath("$.pools.device.inUseBytes").value(is(stats.inUseBytes()))
				.jsonPath("$.pools.device.inUseBuffers").value(is(stats.inUseBuffers()))
				.jsonPath("$.pools.device.cachedBytes").value(is(stats.cachedBytes()))
				.jsonPath("$.pools.device.cachedBuffers").value(is(stats.cachedBuffers()))
				.jsonPath("$.pools.device.reservedBytes").value(is(stats.reservedBytes()))
				.jsonPath("$.pools.device.peakReservedBytes").value(is(stats.peakReservedBytes()))
				.jsonPath("$.pools.device.requests").value(is(stats.requests()))
				.jsonPath("$.pools.device.hits").value(is(stats.hits()))
				.jsonPath("$.pools.device.misses").value(is(stats.misses()))
				.jsonPath("$.pools.device.hitRate")
				.value((Number rate) -> assertThat(rate.doubleValue()).isEqualTo(stats.hitRate()))
				.jsonPath("$.pools.device.returns").value(is(stats.returns()))
				.jsonPath("$.pools.device.trimmedBytes").value(is(stats.trimmedBytes()))
				.jsonPath("$.pools.device.sizeClasses").doesNotExist();
		}
	}

	@Test
	void readsOnePoolWithARowPerSizeClass() {
		try (PooledBuffer first = this.devicePool.acquire(256); PooledBuffer second = this.devicePool.acquire(256)) {
			this.devicePool.acquire(256).close();
			this.devicePool.acquire(200).close();
			SizeClassStatistics row = this.devicePool.statistics().sizeClasses().get(0);
			this.client.get()
				.uri("/actuator/gpumem/device")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.kind").isEqualTo("DEVICE")
				.jsonPath("$.sizeClasses.length()").isEqualTo(71)
				.jsonPath("$.sizeClasses[0].sizeBytes").isEqualTo(256)
				.jsonPath("$.sizeClasses[0].inUseBuffers").value(is(row.inUseBuffers()))
				.jsonPath("$.sizeClasses[0].cachedBuffers").value(is(row.cachedBuffers()))
				.jsonPath("$.sizeClasses[0].hits").value(is(row.hits()))
				.jsonPath("$.sizeClasses[0].misses").value(is(row.misses()));
		}
	}

	/** Lends and caches buffers of the device pool, so that its figures are not all zero; answers them. */
	private PoolStatistics lentAndCached() {
		PooledBuffer first = this.devicePool.acquire(1L << 20);
		PooledBuffer second = this.devicePool.acquire(1L << 20);
		first.close();
		second.close();
		this.devicePool.acquire(1L << 20).close();
		return this.devicePool.statistics();
	}

	private static Consumer<Number> is(long expected) {
		return (actual) -> assertThat(actual.longValue()).isEqualTo(expected);
	}

	@Test
	void showsTheRequestsAboveTheTopClassAndTheBlockCachedForThem() {
		this.devicePool.acquire(70L << 20).close();
		this.client.get()
			.uri("/actuator/gpumem/device")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.aboveTopClass.requests").isEqualTo(1)
			.jsonPath("$.aboveTopClass.misses").isEqualTo(1)
			.jsonPath("$.aboveTopClass.cachedBuffers").isEqualTo(1)
			.jsonPath("$.aboveTopClass.cachedBytes").isEqualTo(70L << 20);
		this.devicePool.trim(0);
	}

	@Test
	void showsTheSegmentsTheClassesAreCutFromAndHowScatteredTheirFreeBytesAre() {
		this.devicePool.trim(0);
		PooledBuffer first = this.devicePool.acquire(512L << 10);
		try (PooledBuffer second = this.devicePool.acquire(512L << 10)) {
			this.devicePool.acquire(512L << 10).close();
			first.close();
			this.client.get()
				.uri("/actuator/gpumem/device")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.segments.segments").isEqualTo(1)
				.jsonPath("$.segments.segmentBytes").isEqualTo(2L << 20)
				.jsonPath("$.segments.freeBytes").isEqualTo(3L << 19)
				.jsonPath("$.segments.largestFreeBlock").isEqualTo(1L << 20)
				.jsonPath("$.segments.fragmentation").isEqualTo(1 - (double) (1L << 20) / (3L << 19));
		}
		this.devicePool.trim(0);
	}

	@Test
	void advisesAPoolFromItsRecordedUse() {
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			held.add(this.devicePool.acquire(700_000));
		}
		held.forEach(PooledBuffer::close);
		this.client.get()
			.uri("/actuator/gpumem/device/advice")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.pool").isEqualTo("device")
			.jsonPath("$.requests").isNumber()
			.jsonPath("$.ladder.current.length()").isEqualTo(71)
			.jsonPath("$.ladder.advised").isArray()
			.jsonPath("$.ladder.added").isArray()
			.jsonPath("$.ladder.heldPerLent").isNumber()
			.jsonPath("$.ladder.predictedHeldPerLent").isNumber()
			.jsonPath("$.warm[?(@.classBytes == 786432)].count").isEqualTo(List.of(6))
			.jsonPath("$.maxCached.advised").isNumber()
			.jsonPath("$.maxCached.keepsHitRate").isEqualTo(true);
		this.client.get().uri("/actuator/gpumem/nope/advice").exchange().expectStatus().isNotFound();
		this.client.get().uri("/actuator/gpumem/device/other").exchange().expectStatus().isNotFound();
		this.client.get().uri("/actuator/gpumem/reduction/advice").exchange().expectStatus().isNotFound();
	}

	@Test
	void aPoolsSnapshotMapsItsSegmentsAndBlocksAddingUpToItsReservedBytes() {
		this.devicePool.trim(0);
		this.devicePool.warm(64 * 1024, 4);
		try (PooledBuffer lent = this.devicePool.acquire(RECORDED_WITH_FRAMES)) {
			this.client.get()
				.uri("/actuator/gpumem/device/snapshot")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.pool").isEqualTo("device")
				.jsonPath("$.reservedBytes").isEqualTo(this.devicePool.reservedBytes())
				.jsonPath("$.segments[*].bytes").value((List<Number> bytes) -> assertThat(bytes.stream()
					.mapToLong(Number::longValue)
					.sum()).isEqualTo(this.devicePool.reservedBytes()))
				.jsonPath("$.segments[0].blocks[0].offset").isEqualTo(0)
				.jsonPath("$.segments[*].blocks[*].state").value((List<String> states) -> assertThat(states)
					.contains("LENT", "CACHED"))
				.jsonPath("$.segments[*].blocks[?(@.state == 'LENT' && @.bytes == " + RECORDED_WITH_FRAMES
						+ ")].acquiredAt[0]")
				.value((List<String> frames) -> assertThat(frames).singleElement()
					.asString()
					.startsWith(getClass().getName() + ".aPoolsSnapshotMapsItsSegmentsAndBlocksAddingUpToItsReservedBytes("));
		}
		this.client.get().uri("/actuator/gpumem/reduction/snapshot").exchange().expectStatus().isNotFound();
		this.client.get().uri("/actuator/gpumem/nope/snapshot").exchange().expectStatus().isNotFound();
	}

	@Test
	void aPoolsHistoryAnswersItsRecentEventsInOrder() {
		this.devicePool.acquire(RECORDED_WITH_FRAMES).close();
		this.devicePool.acquire(RECORDED_WITH_FRAMES).close();
		this.client.get()
			.uri("/actuator/gpumem/device/history")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.pool").isEqualTo("device")
			.jsonPath("$.events[-2].type").isEqualTo("ACQUIRE")
			.jsonPath("$.events[-2].bytes").isEqualTo(RECORDED_WITH_FRAMES)
			.jsonPath("$.events[-2].frames[0]").value((String frame) -> assertThat(frame)
				.startsWith(getClass().getName() + ".aPoolsHistoryAnswersItsRecentEventsInOrder("))
			.jsonPath("$.events[-1].type").isEqualTo("CLOSE")
			.jsonPath("$.events[*].sequence").value((List<Integer> sequences) -> assertThat(sequences).isSorted());
		this.client.get().uri("/actuator/gpumem/reduction/history").exchange().expectStatus().isNotFound();
	}

	@Test
	void anUnknownPoolIsNotFound() {
		this.client.get().uri("/actuator/gpumem/nope").exchange().expectStatus().isNotFound();
		this.client.post()
			.uri("/actuator/gpumem/nope")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"keepBytes\": 0}")
			.exchange()
			.expectStatus()
			.isNotFound();
	}

	@Test
	void aNegativeOrMalformedKeepBytesIsABadRequestNamingTheValueAndTrimsNothing() {
		this.devicePool.warm(64 * 1024, 2);
		long cached = this.devicePool.cachedBytes();
		Map<String, String> reasons = Map.of("{\"keepBytes\": -1}", "keepBytes must not be negative: -1",
				"{\"keepBytes\": \"abc\"}",
				"keepBytes must be a whole number of bytes or a size such as 64MB, not 'abc'",
				"{\"keepBytes\": 1.5}",
				"keepBytes must be a whole number of bytes or a size such as 64MB, not '1.5'");
		reasons.forEach((body, reason) -> {
			for (String uri : new String[] { "/actuator/gpumem", "/actuator/gpumem/device" }) {
				this.client.post()
					.uri(uri)
					.contentType(MediaType.APPLICATION_JSON)
					.body(body)
					.exchange()
					.expectStatus()
					.isBadRequest()
					.expectBody()
					.jsonPath("$.detail")
					.isEqualTo(reason);
			}
		});
		assertThat(this.devicePool.cachedBytes()).isEqualTo(cached);
	}

	@Test
	void aTrimKeepsASizeWrittenAsInApplicationYml() {
		this.devicePool.trim(0);
		this.devicePool.warm(64 * 1024, 32);
		this.devicePool.warm(64 * 1024, 32);
		this.client.post()
			.uri("/actuator/gpumem/device")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"keepBytes\": \"2MB\"}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.pools.device.releasedBytes").isEqualTo(2L << 20)
			.jsonPath("$.pools.device.cachedBytes").isEqualTo(2L << 20);
		this.devicePool.trim(0);
	}

	@Test
	void aTrimOfOnePoolReleasesWholeSegmentsOfItsWarmedBuffersAndSaysSo() {
		this.devicePool.trim(0);
		this.devicePool.warm(64 * 1024, 32);
		this.devicePool.warm(64 * 1024, 32);
		assertThat(this.devicePool.statistics().segments().segments()).as("32 buffers of 64 KiB fill a segment")
			.isEqualTo(2);
		this.client.post()
			.uri("/actuator/gpumem/device")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"keepBytes\": 2097152}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.releasedBytes").isEqualTo(2L << 20)
			.jsonPath("$.pools.device.releasedBytes").isEqualTo(2L << 20)
			.jsonPath("$.pools.device.cachedBytes").isEqualTo(2L << 20);
		assertThat(this.devicePool.statistics().segments().segments()).isEqualTo(1);
		this.devicePool.trim(0);
	}

	/** Fixed segments cannot keep a lent buffer's address without its memory: 409, naming why. */
	@Test
	void aSleepOfAPoolLendingInFixedSegmentsIsAConflict() {
		try (PooledBuffer held = this.devicePool.acquire(3L << 20)) {
			this.client.post()
				.uri("/actuator/gpumem/device/sleep")
				.contentType(MediaType.APPLICATION_JSON)
				.exchange()
				.expectStatus()
				.isEqualTo(409)
				.expectBody()
				.jsonPath("$.error").value((String error) -> assertThat(error)
					.startsWith("pool 'device' cannot sleep: it lends 3.00 MiB in fixed segments"));
			held.fill((byte) 1);
		}
	}

	@Test
	void aTrimToZeroTrimsEveryPoolToNothing() {
		this.devicePool.warm(64 * 1024, 2);
		this.client.post()
			.uri("/actuator/gpumem")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"keepBytes\": 0}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.releasedBytes").isNumber()
			.jsonPath("$.pools.device.cachedBytes").isEqualTo(0)
			.jsonPath("$.pools.pinned.cachedBytes").isEqualTo(0)
			.jsonPath("$.pools.reduction.cachedBytes").isEqualTo(0);
	}

	@Test
	void aTrimWithoutKeepBytesTrimsToNothing() {
		for (String uri : new String[] { "/actuator/gpumem", "/actuator/gpumem/device" }) {
			for (String body : new String[] { "{}", "" }) {
				this.devicePool.warm(64 * 1024, 2);
				assertThat(this.devicePool.cachedBytes()).isPositive();
				this.client.post()
					.uri(uri)
					.contentType(MediaType.APPLICATION_JSON)
					.body(body)
					.exchange()
					.expectStatus()
					.isOk()
					.expectBody()
					.jsonPath("$.releasedBytes").isEqualTo(2L << 20)
					.jsonPath("$.pools.device.cachedBytes").isEqualTo(0);
				assertThat(this.devicePool.cachedBytes()).as("%s with body '%s'", uri, body).isZero();
			}
		}
	}

	@Test
	void theMetersAreThereWithTheirTagsAndUnits() {
		this.devicePool.trim(0);
		this.devicePool.warm(64 * 1024, 4);
		this.client.get()
			.uri("/actuator/metrics/gpumem.pool.memory?tag=pool:device&tag=state:cached")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.baseUnit").isEqualTo("bytes")
			.jsonPath("$.measurements[0].value").isEqualTo(2L << 20);
		for (String meter : new String[] { "gpumem.pool.buffers", "gpumem.pool.requests", "gpumem.pool.trimmed",
				"gpumem.device.memory", "gpumem.pressure.level", "gpumem.allocation.failures" }) {
			this.client.get().uri("/actuator/metrics/" + meter).exchange().expectStatus().isOk();
		}
	}

	@Test
	void anOpenPermitShowsInTheDevicesAdmissionAndItsMeter() {
		try (GpuAdmission.Permit permit = this.admission.enter(24L << 20, Duration.ZERO);
				PooledBuffer lent = permit.acquire(4L << 20)) {
			this.client.get()
				.uri("/actuator/gpumem")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.admission.claimedBytes").isEqualTo(24L << 20)
				.jsonPath("$.admission.lentBytes").isEqualTo(4L << 20)
				.jsonPath("$.admission.active").isEqualTo(1)
				.jsonPath("$.admission.admitted").value(is(this.admission.statistics().admitted()))
				.jsonPath("$.devices[0].admission.claimedBytes").isEqualTo(24L << 20);
			this.client.get()
				.uri("/actuator/metrics/gpumem.admission.claimed")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.baseUnit").isEqualTo("bytes")
				.jsonPath("$.measurements[0].value").isEqualTo(24L << 20);
		}
		this.client.get()
			.uri("/actuator/metrics/gpumem.admission.claimed")
			.exchange()
			.expectBody()
			.jsonPath("$.measurements[0].value").isEqualTo(0);
	}

	@Test
	void theHealthComponentIsUpWithDetails() {
		this.client.get()
			.uri("/actuator/health/gpumem")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.status").isEqualTo("UP")
			.jsonPath("$.details.backend").isEqualTo("host")
			.jsonPath("$.details.level").isEqualTo("NORMAL")
			.jsonPath("$.details.totalBytes").isEqualTo(256 * 1024 * 1024);
	}

}
