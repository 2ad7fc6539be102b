package io.gpumem.sample;

import java.net.URI;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.web.server.LocalServerPort;

/** The checks of {@link SampleContract} as tests, for each backend's running service. */
abstract class SampleContractTests {

	@LocalServerPort
	private int port;

	private final SplittableRandom random = new SplittableRandom();

	@Test
	void addAndSaxpyAgreeWithFloat32ArithmeticAtEverySize() {
		contract().addAndSaxpy();
	}

	@Test
	void reductionsAgreeWithTheReference() {
		contract().reductions();
	}

	@Test
	void pageRankWithDanglingNodesAgreesWithTheReference() {
		contract().pageRankWithDanglingNodes();
	}

	@Test
	void pageRankOfAGeneratedGraphGivesItsTenBestNodes() {
		contract().pageRankOfAGeneratedGraph();
	}

	@Test
	void underLoadTheDevicePoolsSnapshotAddsUpAndNamesTheServiceHoldingLargeBuffers() {
		contract().memoryMapUnderLoad();
	}

	/** A contract on inputs drawn from {@code -Dsample.seed}, or a fresh seed, printed so that a failure reruns. */
	protected SampleContract contract() {
		long seed = Long.getLong("sample.seed", this.random.nextLong());
		System.out.println("SampleContract seed " + seed + " (rerun with -Dsample.seed=" + seed + ")");
		return new SampleContract(URI.create("http://localhost:" + this.port), seed);
	}

}
