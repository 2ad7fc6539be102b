package io.gpumem;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.HistoryConfig;
import io.gpumem.pool.diagnostics.MemoryEvent;
import io.gpumem.pool.diagnostics.PoolHistory;
import io.gpumem.pool.diagnostics.PoolRecorder;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The core's layout, a package per concern with dependencies that run one way: the pool and its tiers on top, the
 * arena, out-of-memory recovery and diagnostics beneath it, replay and advice beside it. A rule a line; a broken one
 * names the classes and the dependency that break it.
 */
class CoreLayoutTest {

	private static final JavaClasses CORE = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("io.gpumem");

	private static final String POOL = "io.gpumem.pool";

	@Test
	void noPackageDependsOnItselfThroughAnother() {
		slices().matching("io.gpumem.(**)").should().beFreeOfCycles().check(CORE);
	}

	@Test
	void theArenaKnowsNothingOfThePoolAboveIt() {
		noClasses().that().resideInAPackage(POOL + ".arena").should().dependOnClassesThat()
			.resideInAnyPackage(POOL, POOL + ".recovery", POOL + ".diagnostics", POOL + ".advice").check(CORE);
	}

	@Test
	void outOfMemoryRecoveryKnowsNothingOfThePoolsBlocks() {
		noClasses().that().resideInAPackage(POOL + ".recovery").should().dependOnClassesThat()
			.resideInAnyPackage(POOL, POOL + ".arena", POOL + ".diagnostics", POOL + ".advice").check(CORE);
	}

	@Test
	void diagnosticsKnowNothingOfThePoolTheyRecord() {
		noClasses().that().resideInAPackage(POOL + ".diagnostics").should().dependOnClassesThat()
			.resideInAnyPackage(POOL, POOL + ".arena", POOL + ".recovery", POOL + ".advice").check(CORE);
	}

	@Test
	void thePoolRecordsThroughTheRecorderInterfaceOnly() {
		noClasses().that().resideInAPackage(POOL).should().dependOnClassesThat(resideInAPackage(POOL + ".diagnostics")
			.and(not(belongToAnyOf(PoolRecorder.class, BufferRecording.class, HistoryConfig.class, MemoryEvent.class,
					PoolHistory.class))))
			.check(CORE);
	}

	@Test
	void replayAndAdviceStayOutsideTheLendingPackage() {
		noClasses().that().resideInAnyPackage(POOL, POOL + ".arena", POOL + ".recovery", POOL + ".diagnostics")
			.should().dependOnClassesThat().resideInAPackage(POOL + ".advice").check(CORE);
	}

	@Test
	void thePoolKnowsNothingOfTheAdmissionAboveIt() {
		noClasses().that().resideInAPackage(POOL + "..").should().dependOnClassesThat()
			.resideInAPackage("io.gpumem.admission").check(CORE);
	}

	@Test
	void theCoreNeverImportsSpring() {
		noClasses().should().dependOnClassesThat().resideInAPackage("org.springframework..").check(CORE);
	}

}
