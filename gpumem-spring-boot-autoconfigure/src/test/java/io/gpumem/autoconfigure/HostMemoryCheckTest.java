package io.gpumem.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

@ExtendWith(OutputCaptureExtension.class)
class HostMemoryCheckTest {

	private static final long GIB = 1L << 30;

	@Test
	void moreThanTheMachineHasStopsStartupNamingTheProperty() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class))
			.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=100TB")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.isInstanceOf(InvalidConfigurationPropertyValueException.class)
					.hasMessageContaining("gpumem.host.capacity")
					.hasMessageContaining("the emulated device (100.00 TiB) and its pinned memory (100.00 TiB) take "
							+ "200.00 TiB, more than this machine's");
			});
	}

	@Test
	void moreThanTheDirectMemoryLimitWarnsHowToRaiseIt(CapturedOutput output) {
		HostMemoryCheck.check(GIB, GIB, GIB, 64 * GIB);
		assertThat(output).contains("the emulated device (1.00 GiB) and its pinned memory (1.00 GiB) take 2.00 GiB "
				+ "of direct memory, more than this JVM's limit of 1.00 GiB",
				"-XX:MaxDirectMemorySize=2048m or more, or lower gpumem.host.capacity");
	}

	@Test
	void withinBothLimitsSaysNothing(CapturedOutput output) {
		HostMemoryCheck.check(GIB, GIB / 2, 2 * GIB, 64 * GIB);
		assertThat(output).doesNotContain("gpumem host backend");
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> HostMemoryCheck.check(GIB, GIB, 8 * GIB, GIB));
	}

	@Test
	void theDirectMemoryLimitIsTheHeapUnlessSet() {
		assertThat(HostMemoryCheck.directMemoryLimit()).as("no -XX:MaxDirectMemorySize in the test JVM")
			.isEqualTo(Runtime.getRuntime().maxMemory());
	}

}
