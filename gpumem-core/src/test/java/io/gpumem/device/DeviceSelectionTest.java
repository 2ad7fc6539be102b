package io.gpumem.device;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.gpumem.config.InvalidSettingException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** {@code gpumem.devices}: all, or ordinals, each refusal naming its place in the list. */
class DeviceSelectionTest {

	@Test
	void allSelectsEveryDeviceTheBackendHas() {
		DeviceSelection all = DeviceSelection.parse(List.of(" ALL "));
		assertThat(all).hasToString("all");
		assertThat(all.resolve(3, "3 devices")).containsExactly(0, 1, 2);
		assertThat(all.first()).isZero();
	}

	@Test
	void ordinalsAreKeptInTheirOrderTheFirstBeingProbed() {
		DeviceSelection listed = DeviceSelection.parse(List.of("2", "0"));
		assertThat(listed.resolve(4, "4 devices")).containsExactly(2, 0);
		assertThat(listed.first()).isEqualTo(2);
		assertThat(listed.needs()).isEqualTo(3);
		assertThat(DeviceSelection.all().needs()).isEqualTo(1);
		assertThat(listed).hasToString("[2, 0]");
	}

	@Test
	void aBadValueIsRefusedByItsPlaceInTheList() {
		assertThat(refusal(List.of("0", "one"))).isEqualTo("devices[1] must be a device ordinal, or the whole list 'all', not one");
		assertThat(refusal(List.of("0", "-1"))).isEqualTo("devices[1] must be 0 or more, not -1");
		assertThat(refusal(List.of("1", "0", "1"))).isEqualTo("devices[2] lists a device twice, not 1");
		assertThat(refusal(List.of("all", "0"))).startsWith("devices[0] must be a device ordinal");
		assertThat(refusal(List.of())).isEqualTo("devices must name at least one device, or be 'all', not []");
		assertThatExceptionOfType(InvalidSettingException.class)
			.isThrownBy(() -> DeviceSelection.of(List.of(0, 3)).resolve(2, "the CUDA driver found 2 device(s)"))
			.withMessage("devices[1] must name a device that exists: the CUDA driver found 2 device(s), not 3");
	}

	private static String refusal(List<String> values) {
		try {
			DeviceSelection.parse(values);
			throw new AssertionError("accepted " + values);
		}
		catch (InvalidSettingException ex) {
			return ex.getMessage();
		}
	}

}
