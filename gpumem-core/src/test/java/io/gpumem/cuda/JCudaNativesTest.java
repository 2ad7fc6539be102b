package io.gpumem.cuda;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/** The probe's plain word for a platform JCuda publishes no natives for, told by os.name and os.arch. */
class JCudaNativesTest {

	private final String osName = System.getProperty("os.name");

	private final String osArch = System.getProperty("os.arch");

	@AfterEach
	void restorePlatform() {
		System.setProperty("os.name", this.osName);
		System.setProperty("os.arch", this.osArch);
	}

	@Test
	void linuxOnX86HasItsNativesOnTheClassPath() {
		assumeThat(getClass().getClassLoader().getResource("lib/libJCudaDriver-12.6.0-linux-x86_64.so"))
			.as("JCuda's linux-x86_64 natives are on the class path (not in a build resolved as on another platform)")
			.isNotNull();
		platform("Linux", "amd64");
		assertThat(JCudaNatives.missingFor(getClass().getClassLoader())).isNull();
	}

	@Test
	void linuxOnArmAndMacOsAreNamedWithWhatCanBeUsedInstead() {
		platform("Linux", "aarch64");
		assertThat(JCudaNatives.missingFor(getClass().getClassLoader())).isEqualTo(
				"JCuda 12.6.0 has no native library for this platform (linux-aarch64): org.jcuda:jcuda-natives is "
						+ "published for linux-x86_64 and windows-x86_64 only, so CUDA cannot be used here; the host "
						+ "backend can (gpumem.backend=auto or host)");
		platform("Mac OS X", "aarch64");
		assertThat(JCudaNatives.missingFor(getClass().getClassLoader())).contains("(apple-aarch64)");
		platform("Mac OS X", "x86_64");
		assertThat(JCudaNatives.missingFor(getClass().getClassLoader())).contains("(apple-x86_64)");
	}

	private static void platform(String name, String arch) {
		System.setProperty("os.name", name);
		System.setProperty("os.arch", arch);
	}

}
