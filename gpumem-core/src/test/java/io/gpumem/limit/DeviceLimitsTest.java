package io.gpumem.limit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.logging.Level;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.gpumem.allocator.MemoryBudget;
import io.gpumem.host.HostBackend;
import io.gpumem.limit.LimitReading.Kind;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.pool.PoolLog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.within;

/** Each source of a device's limit, their combinations, renumbered devices, malformed values and limits above the card. */
class DeviceLimitsTest {

	private static final long MIB = 1L << 20;

	private static final long GIB = 1L << 30;

	private static final long CARD = GIB;

	private final Map<String, String> environment = new HashMap<>();

	@TempDir
	Path cgroupRoot;

	private Path selfCgroup;

	@BeforeEach
	void noCgroup() throws IOException {
		this.selfCgroup = this.cgroupRoot.resolve("self-cgroup");
		Files.writeString(this.selfCgroup, "0::/\n");
	}

	@Test
	void withoutASourceTheCardIsTheLimitAndTheBudgetItsFraction() {
		DeviceLimit limit = read(0);
		assertThat(limit.limitBytes()).isEqualTo(CARD);
		assertThat(limit.source()).isEqualTo("the card");
		assertThat(limit.shared()).isFalse();
		assertThat(limit.readings()).isEmpty();
		assertThat(limit.budget(0.9).limitBytes()).isEqualTo((long) Math.floor(CARD * 0.9));
		MemoryInfo card = new MemoryInfo(CARD / 4, CARD);
		assertThat(limit.memoryInfo(card, 10 * MIB)).as("every process's use of the card counts").isSameAs(card);
	}

	@Test
	void hamisLimitOfTheDeviceGoesBeforeItsLimitOfEveryDevice() {
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_0", "300m");
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT", "4g");
		DeviceLimit first = read(0);
		assertThat(first.limitBytes()).isEqualTo(314572800L);
		assertThat(first.source()).isEqualTo("CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)");
		assertThat(first.shared()).isTrue();
		DeviceLimit second = read(1, 8 * GIB);
		assertThat(second.limitBytes()).isEqualTo(4 * GIB);
		assertThat(second.source()).isEqualTo("CUDA_DEVICE_MEMORY_LIMIT (HAMi)");
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT", "512K");
		assertThat(read(1).limitBytes()).isEqualTo(512 * 1024);
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT", "123456789");
		assertThat(read(1).limitBytes()).as("a bare number counts bytes, as HAMi's hook reads it").isEqualTo(123456789);
	}

	@Test
	void mpsStatesOneSizeForEveryDeviceOrOnePerOrdinalOrUuid() {
		this.environment.put("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "768M");
		assertThat(read(0).limitBytes()).isEqualTo(768 * MIB);
		assertThat(read(3).source()).isEqualTo("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (MPS)");
		assertThat(read(3).limitBytes()).isEqualTo(768 * MIB);
		this.environment.put("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=768M,1=512MB");
		assertThat(read(0).limitBytes()).isEqualTo(768 * MIB);
		assertThat(read(1).limitBytes()).isEqualTo(512 * MIB);
		assertThat(read(1).source()).isEqualTo("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (MPS)");
		assertThat(read(2).shared()).as("a device the variable does not list").isFalse();
		this.environment.put("CUDA_VISIBLE_DEVICES", "GPU-8932f937-d72c,GPU-aa11bb22-3344");
		this.environment.put("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "GPU-aa11bb22=256M");
		assertThat(read(0).shared()).isFalse();
		assertThat(read(1).limitBytes()).as("a UUID's first characters name the device").isEqualTo(256 * MIB);
		this.environment.put("CUDA_VISIBLE_DEVICES", "GPU-8932,GPU-aa11");
		assertThat(read(1).limitBytes()).as("and so do the visible device's").isEqualTo(256 * MIB);
	}

	@Test
	void cgroupDmemMaxOfTheProcessesCgroupAndItsAncestorsLimitsAndDmemMinIsProtected() throws IOException {
		cgroup("/kubepods/pod1/c1");
		dmem("/kubepods", "dmem.max", "nvidia/00000000:01:00.0/vidmem 402653184\nnvidia/00000000:02:00.0/vidmem max");
		dmem("/kubepods/pod1/c1", "dmem.max", "nvidia/00000000:01:00.0/vidmem 536870912\nnvidia/00000000:02:00.0/vidmem 1");
		dmem("/kubepods/pod1/c1", "dmem.min", "nvidia/00000000:01:00.0/vidmem 134217728\nnvidia/00000000:02:00.0/vidmem 0");
		dmem("/kubepods/pod1/c1", "dmem.low", "nvidia/00000000:01:00.0/vidmem 268435456\nnvidia/00000000:02:00.0/vidmem 0");
		DeviceLimit limit = limits().read(new SharedDevice(0, CARD, "0000:01:00.0", null), card(CARD));
		assertThat(limit.limitBytes()).as("the ancestor's is smaller").isEqualTo(384 * MIB);
		assertThat(limit.source()).isEqualTo("dmem.max of cgroup /kubepods (nvidia/00000000:01:00.0/vidmem) (cgroup dmem)");
		assertThat(limit.protectedBytes()).as("dmem.min; dmem.low's best effort is not read").isEqualTo(128 * MIB);
		assertThat(limit.protectedSource()).startsWith("dmem.min of cgroup /kubepods/pod1/c1");
		assertThat(limit.protectedUtilization().getAsDouble()).isCloseTo(128.0 / 384, within(1e-9));
		DeviceLimit other = limits().read(new SharedDevice(1, CARD, "0000:02:00.0", null), card(CARD));
		assertThat(other.limitBytes()).as("the other device's region").isEqualTo(1);
		assertThat(other.protectedBytes()).isZero();
		DeviceLimit unknown = limits().read(new SharedDevice(2, CARD, "0000:03:00.0", null), card(CARD));
		assertThat(unknown.shared()).as("no region of that device").isFalse();
	}

	@Test
	void aProtectedAmountWithoutALimitHasPressureWeighWhatGpumemHolds() throws IOException {
		cgroup("/pod");
		dmem("/pod", "dmem.min", "region 268435456");
		DeviceLimit limit = read(0);
		assertThat(limit.shared()).isFalse();
		assertThat(limit.protectedUtilization().getAsDouble()).isEqualTo(0.25);
		assertThat(limit.memoryInfo(new MemoryInfo(0, CARD), 100 * MIB))
			.as("other pods' use of the card is not this process's memory at risk")
			.isEqualTo(new MemoryInfo(CARD - 100 * MIB, CARD));
	}

	@Test
	void aLimitOfNoMemoryIsRefusedNamingItsSource() throws IOException {
		cgroup("/pod");
		dmem("/pod", "dmem.max", "region 0");
		assertThatExceptionOfType(InvalidLimitException.class).isThrownBy(() -> read(0))
			.satisfies((ex) -> assertThat(ex.origin()).isEqualTo("dmem.max of cgroup /pod (region)"))
			.withMessageContaining("above zero");
		dmem("/pod", "dmem.max", "region max");
		this.environment.put("GPU_PORTION", "0.0000000001");
		assertThatExceptionOfType(InvalidLimitException.class).isThrownBy(() -> read(0))
			.satisfies((ex) -> assertThat(ex.origin()).isEqualTo("GPU_PORTION"));
	}

	@Test
	void aDeviceWithoutABusIdTakesTheCgroupsOnlyRegion() throws IOException {
		cgroup("/pod");
		dmem("/pod", "dmem.max", "drm/0000:03:00.0/vram0 209715200");
		assertThat(read(0).limitBytes()).isEqualTo(200 * MIB);
		dmem("/pod", "dmem.max", "drm/0000:03:00.0/vram0 209715200\ndrm/0000:04:00.0/vram0 104857600");
		assertThat(read(0).shared()).as("which region is the device's cannot be told").isFalse();
		dmem("/pod", "dmem.max", "drm/0000:03:00.0/vram0 max");
		assertThat(read(0).shared()).isFalse();
	}

	@Test
	void aSchedulersShareIsKeptThoughNobodyEnforcesIt() {
		this.environment.put("GPU_PORTION", "0.50");
		DeviceLimit limit = read(0);
		assertThat(limit.limitBytes()).isEqualTo(CARD / 2);
		assertThat(limit.source()).isEqualTo("GPU_PORTION (scheduler's share, not enforced)");
		assertThat(limit.readings()).extracting(LimitReading::kind).containsExactly(Kind.ADVISORY);
		this.environment.put("GPU_MEMORY_LIMIT", "300Mi");
		assertThat(read(0).limitBytes()).isEqualTo(300 * MIB);
		assertThat(read(0).source()).startsWith("GPU_MEMORY_LIMIT");
		this.environment.put("GPU_MEMORY_LIMIT", "200");
		assertThat(read(0).limitBytes()).as("a bare number counts MiB").isEqualTo(200 * MIB);
	}

	@Test
	void theSmallestOfEverySourceWinsAndEveryFigureIsKept() throws IOException {
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_0", "300m");
		this.environment.put("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=200M");
		this.environment.put("GPU_PORTION", "0.25");
		DeviceLimit limit = read(0);
		assertThat(limit.limitBytes()).isEqualTo(200 * MIB);
		assertThat(limit.source()).isEqualTo("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (MPS)");
		assertThat(limit.readings()).extracting(LimitReading::bytes).containsExactly(200 * MIB, 300 * MIB, 256 * MIB);
		cgroup("/pod");
		dmem("/pod", "dmem.max", "region 104857600");
		assertThat(read(0).limitBytes()).isEqualTo(100 * MIB);
		assertThat(read(0).source()).endsWith("(cgroup dmem)");
	}

	@Test
	void perDeviceVariablesFollowTheProcesssNumberingOfTheVisibleDevices() {
		this.environment.put("CUDA_VISIBLE_DEVICES", "2,3");
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_0", "1g");
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_1", "2g");
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_2", "3g");
		DeviceLimit second = read(1, 8 * GIB);
		assertThat(second.limitBytes()).isEqualTo(2 * GIB);
		assertThat(second.device().visibleAs()).isEqualTo("3");
		assertThat(second.describe(second.budget(0.5), 0.5)).startsWith("Device 1 (visible as 3): limit 2.00 GiB");
	}

	@Test
	void aMigInstanceIsItsOwnCard() {
		this.environment.put("CUDA_VISIBLE_DEVICES", "MIG-5c3f8a1e-7f2b");
		DeviceLimit limit = read(0);
		assertThat(limit.shared()).isFalse();
		assertThat(limit.source()).isEqualTo("the MIG instance MIG-5c3f8a1e-7f2b");
		assertThat(limit.describe()).isEqualTo("limit 1.00 GiB, the MIG instance MIG-5c3f8a1e-7f2b's");
	}

	@Test
	void theContainersVisibleDevicesNameTheDeviceWhereCudaVisibleDevicesIsNotSet() {
		this.environment.put("NVIDIA_VISIBLE_DEVICES", "MIG-77aa01");
		try (HostBackend backend = new HostBackend(CARD)) {
			assertThat(limits().read(backend).source()).isEqualTo("the MIG instance MIG-77aa01");
			this.environment.put("NVIDIA_VISIBLE_DEVICES", "all");
			assertThat(limits().read(backend).source()).isEqualTo("the card");
		}
	}

	@Test
	void aMalformedValueNamesTheVariableTheValueAndTheAcceptedForm() {
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_0", "lots");
		assertThatExceptionOfType(InvalidLimitException.class).isThrownBy(() -> read(0))
			.satisfies((ex) -> {
				assertThat(ex.origin()).isEqualTo("CUDA_DEVICE_MEMORY_LIMIT_0");
				assertThat(ex.value()).isEqualTo("lots");
				assertThat(ex.acceptedForm()).contains("300m", "4g");
			})
			.withMessage("CUDA_DEVICE_MEMORY_LIMIT_0 is 'lots', which gpumem cannot read as a device memory limit: "
					+ "it must be a number of bytes, or a number with k, m or g (300m, 4g)");
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_0", "2000Mi");
		assertThatExceptionOfType(InvalidLimitException.class).as("HAMi's hook would read 2000 bytes")
			.isThrownBy(() -> read(0));
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_0", "0");
		assertThatExceptionOfType(InvalidLimitException.class).isThrownBy(() -> read(0))
			.withMessageContaining("above zero");
		this.environment.clear();
		for (String mps : new String[] { "0=2G,x=1G", "0=2G,1", "two gigs", "0=-1G" }) {
			this.environment.put("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", mps);
			assertThatExceptionOfType(InvalidLimitException.class).as(mps).isThrownBy(() -> read(0))
				.satisfies((ex) -> assertThat(ex.origin()).isEqualTo("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"));
		}
		this.environment.clear();
		for (String portion : new String[] { "1.5", "0", "half" }) {
			this.environment.put("GPU_PORTION", portion);
			assertThatExceptionOfType(InvalidLimitException.class).as(portion).isThrownBy(() -> read(0))
				.withMessageContaining("above 0 and at most 1");
		}
	}

	@Test
	void aMalformedCgroupFileNamesTheFileAndTheRegion() throws IOException {
		cgroup("/pod");
		dmem("/pod", "dmem.max", "region lots");
		assertThatExceptionOfType(InvalidLimitException.class).isThrownBy(() -> read(0))
			.satisfies((ex) -> assertThat(ex.origin()).isEqualTo("dmem.max of cgroup /pod (region)"));
		dmem("/pod", "dmem.max", "region 1 2");
		assertThatExceptionOfType(InvalidLimitException.class).isThrownBy(() -> read(0));
	}

	@Test
	void aLimitAboveTheCardIsTakenAsTheCardWithAWarning() {
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_0", "4g");
		try (PoolLog log = PoolLog.capture(DeviceLimits.class, Level.WARNING)) {
			DeviceLimit limit = read(0);
			assertThat(limit.limitBytes()).isEqualTo(CARD);
			assertThat(limit.source()).isEqualTo("the card");
			assertThat(limit.shared()).isFalse();
			assertThat(limit.readings()).extracting(LimitReading::bytes).containsExactly(CARD);
			assertThat(log.messages()).containsExactly("CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi) states 4.00 GiB for device 0, "
					+ "more than the 1.00 GiB the card has: gpumem takes the card's");
		}
	}

	@Test
	void whereTheDriverReportsTheShareItselfWhatItShowsInUseIsLeftOutOfTheBudget() {
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_0", "300m");
		DeviceLimit hooked = limits().read(new SharedDevice(0, 300 * MIB, null, null),
				new MemoryInfo(250 * MIB, 300 * MIB));
		assertThat(hooked.contextBytes()).isEqualTo(50 * MIB);
		MemoryBudget budget = hooked.budget(0.8);
		assertThat(budget.limitBytes()).isEqualTo((long) Math.floor(300 * MIB * 0.8) - 50 * MIB);
		assertThat(budget.origin()).isEqualTo("memory-fraction 0.8 of the limit of 300.00 MiB from "
				+ "CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi), less the 50.00 MiB the driver showed in use at startup");
		assertThat(hooked.describe(budget, 0.8)).endsWith(
				"memory-fraction 0.8: budget 190.00 MiB, less the 50.00 MiB the driver showed in use at startup");
		this.environment.clear();
		this.environment.put("GPU_PORTION", "1");
		DeviceLimit whole = limits().read(new SharedDevice(0, CARD, null, null), new MemoryInfo(CARD / 2, CARD));
		assertThat(whole.shared()).as("the share a source states, the whole card").isTrue();
		assertThat(whole.contextBytes()).as("only HAMi's hook reports the share as the card").isZero();
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_0", "300m");
		assertThat(hooked.memoryInfo(card(300 * MIB), 100 * MIB))
			.as("pressure weighs what gpumem holds and the context against the limit")
			.isEqualTo(new MemoryInfo(150 * MIB, 300 * MIB));
		DeviceLimit card = limits().read(new SharedDevice(0, CARD, null, null), new MemoryInfo(CARD / 2, CARD));
		assertThat(card.contextBytes()).as("the card's figures count other processes").isZero();
		assertThat(card.memoryInfo(new MemoryInfo(0, CARD), 400 * MIB)).isEqualTo(new MemoryInfo(0, 300 * MIB));
	}

	@Test
	void theHostBackendsDeviceIsLimitedAsACardIsAndTheStartupLineNamesItAll() {
		this.environment.put("CUDA_DEVICE_MEMORY_LIMIT_0", "300m");
		try (HostBackend backend = new HostBackend(CARD)) {
			DeviceLimit limit = limits().read(backend);
			assertThat(limit.limitBytes()).isEqualTo(314572800L);
			MemoryBudget budget = limit.budget(0.8);
			assertThat(budget.limitBytes()).isEqualTo(251658240L);
			assertThat(limit.describe(budget, 0.8)).isEqualTo("Device 0: limit 300.00 MiB from "
					+ "CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi; the card has 1.00 GiB); memory-fraction 0.8: budget 240.00 MiB");
		}
	}

	private DeviceLimits limits() {
		return new DeviceLimits(this.environment::get, this.cgroupRoot, this.selfCgroup);
	}

	private DeviceLimit read(int ordinal) {
		return read(ordinal, CARD);
	}

	private DeviceLimit read(int ordinal, long cardBytes) {
		String visible = this.environment.get("CUDA_VISIBLE_DEVICES");
		String visibleAs = (visible != null) ? visible.split(",")[ordinal] : null;
		return limits().read(new SharedDevice(ordinal, cardBytes, null, visibleAs), card(cardBytes));
	}

	private static MemoryInfo card(long bytes) {
		return new MemoryInfo(bytes, bytes);
	}

	private void cgroup(String path) throws IOException {
		Files.writeString(this.selfCgroup, "0::" + path + "\n");
	}

	private void dmem(String group, String file, String content) throws IOException {
		Path dir = this.cgroupRoot.resolve(group.substring(1));
		Files.createDirectories(dir);
		Files.writeString(dir.resolve(file), content + "\n");
	}

}
