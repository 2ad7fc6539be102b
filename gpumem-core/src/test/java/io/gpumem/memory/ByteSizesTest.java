package io.gpumem.memory;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ByteSizesTest {

	@Test
	void formatsForPeopleInBinaryUnits() {
		assertThat(ByteSizes.format(512)).isEqualTo("512 B");
		assertThat(ByteSizes.format(3 * 1024 * 1024 / 2)).isEqualTo("1.50 MiB");
	}

	@Test
	void exactNamesASizeAsConfigurationWritesIt() {
		assertThat(ByteSizes.exact(0)).isEqualTo("0B");
		assertThat(ByteSizes.exact(1000)).isEqualTo("1000B");
		assertThat(ByteSizes.exact(4096)).isEqualTo("4KB");
		assertThat(ByteSizes.exact(1536 * 1024)).isEqualTo("1536KB");
		assertThat(ByteSizes.exact(3L << 20)).isEqualTo("3MB");
		assertThat(ByteSizes.exact(2L << 40)).isEqualTo("2TB");
		assertThat(ByteSizes.exact(2L << 50)).isEqualTo("2048TB");
	}

}
