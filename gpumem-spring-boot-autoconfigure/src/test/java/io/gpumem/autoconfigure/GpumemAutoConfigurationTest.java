package io.gpumem.autoconfigure;

import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.env.StandardEnvironment;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.allocator.AllocatorDecorator;
import io.gpumem.allocator.LimitingAllocator;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.backend.GpuBackend;
import io.gpumem.device.BackendSelection;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolAsleepException;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolPreset;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.SizeClassStatistics;
import io.gpumem.pool.SleepMode;
import io.gpumem.pool.SleepOnAcquire;
import io.gpumem.pool.SleepStatus;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureHysteresis;
import io.gpumem.pressure.PressureLevel;
import io.gpumem.pressure.PressureReaction;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.transfer.Transfers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class GpumemAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class))
		.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=64MB");

	@Test
	void defaultsGiveTheHostBackendDeviceAndPinnedPoolsReductionCacheTransfersAndPressureHandler() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(BackendSelection.class)
				.hasSingleBean(ReductionBufferCache.class)
				.hasSingleBean(Transfers.class)
				.hasSingleBean(PressureHandler.class)
				.hasBean("gpumemDevicePool")
				.hasBean("gpumemPinnedPool")
				.doesNotHaveBean("gpumemUnifiedPool");
			assertThat(context.getBean(GpuBackend.class)).isInstanceOf(HostBackend.class);
			assertThat(context.getBean(GpuBackend.class).memoryInfo().totalBytes()).isEqualTo(64L << 20);
			StratifiedMemoryPool device = context.getBean(StratifiedMemoryPool.class);
			assertThat(device.name()).isEqualTo("device");
			assertThat(device.kind()).isEqualTo(MemoryKind.DEVICE);
			assertThat(device.sizeClasses().count()).as("the default ladder").isEqualTo(71);
			assertThat(context.getBean(GpumemPools.class).asMap()).containsOnlyKeys("device", "pinned", "reduction");
			assertThat(AllocatorDecorator.find(device.allocator(), LimitingAllocator.class).limitBytes())
				.as("memory-fraction 0.9 of 64 MiB")
				.isEqualTo((long) (0.9 * (64L << 20)));
			PressureHandler handler = context.getBean(PressureHandler.class);
			assertThat(handler.reaction(PressureLevel.ELEVATED)).isEqualTo(PressureReaction.none());
			assertThat(handler.reaction(PressureLevel.WARNING)).isEqualTo(PressureReaction.shrink(0.7));
			assertThat(handler.statistics().checks()).isPositive();
		});
	}

	@Test
	void theDeviceAndUnifiedPoolsTogetherNeverExceedTheMemoryFraction() {
		this.runner.withPropertyValues("gpumem.unified-pool.enabled=true", "gpumem.memory-fraction=0.5")
			.run((context) -> {
				StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				StratifiedMemoryPool unified = context.getBean("gpumemUnifiedPool", StratifiedMemoryPool.class);
				long limit = (long) (0.5 * (64L << 20));
				assertThat(context.getBean(MemoryBudget.class).limitBytes()).isEqualTo(limit);
				List<PooledBuffer> held = new ArrayList<>();
				try {
					for (int i = 0; i < 64; i++) {
						StratifiedMemoryPool pool = (i % 2 == 0) ? device : unified;
						try {
							held.add(pool.acquire(1 << 20));
						}
						catch (GpuOutOfMemoryException ex) {
							assertThat(ex.diagnostic().limitBytes()).isEqualTo(limit);
						}
					}
					assertThat(device.reservedBytes() + unified.reservedBytes()).isLessThanOrEqualTo(limit)
						.isGreaterThan(limit - (2L << 20));
					assertThat(device.reservedBytes()).isPositive();
					assertThat(unified.reservedBytes()).isPositive();
				}
				finally {
					held.forEach(PooledBuffer::close);
				}
			});
	}

	@Test
	void autoOnAMachineWithoutADeviceSaysWhyItChoseTheHostBackend() {
		this.runner.withPropertyValues("gpumem.backend=auto").run((context) -> {
			BackendSelection selection = context.getBean(BackendSelection.class);
			if (selection.probe().usable()) {
				assertThat(selection.backend().name()).isEqualTo("cuda");
			}
			else {
				assertThat(selection.backend().name()).isEqualTo("host");
				assertThat(selection.reason()).contains("no usable CUDA device", selection.probe().reason());
			}
		});
	}

	@Test
	void aPresetGivesItsLadderAndWarmUp() {
		this.runner.withPropertyValues("gpumem.device-pool.preset=graph-analytics").run((context) -> {
			StratifiedMemoryPool device = context.getBean(StratifiedMemoryPool.class);
			assertThat(device.sizeClasses().count()).isEqualTo(6);
			assertThat(device.statistics().cachedBuffers()).isPositive();
		});
	}

	@Test
	void explicitSizeClassesWarmUpAndCapsAreApplied() {
		this.runner
			.withPropertyValues("gpumem.device-pool.size-classes=256B,1KB,4KB,64KB", "gpumem.device-pool.warm[64KB]=5",
					"gpumem.device-pool.max-cached-buffers[4KB]=2", "gpumem.device-pool.max-cached=1MB")
			.run((context) -> {
				StratifiedMemoryPool device = context.getBean(StratifiedMemoryPool.class);
				assertThat(device.sizeClasses().count()).isEqualTo(4);
				assertThat(device.sizeClasses().largest()).isEqualTo(64 * 1024);
				assertThat(device.statistics().sizeClasses().get(3).cachedBuffers()).isEqualTo(5);
				List<PooledBuffer> held = new ArrayList<>();
				for (int i = 0; i < 5; i++) {
					held.add(device.acquire(4096));
				}
				held.forEach(PooledBuffer::close);
				assertThat(device.statistics().sizeClasses().get(2).cachedBuffers()).isEqualTo(2);
			});
	}

	@Test
	void aWarmUpOfASizeThatIsNotAClassStopsStartupNamingTheProperty() {
		this.runner.withPropertyValues("gpumem.device-pool.size-classes=1KB,4KB", "gpumem.device-pool.warm[3KB]=5")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class, (ex) -> {
						assertThat(ex.getName()).isEqualTo("gpumem.device-pool.warm[3KB]");
						assertThat(ex.getValue()).isEqualTo(5);
						assertThat(ex.getReason()).contains("names 3072 bytes, which is not a size class");
					});
			});
	}

	@Test
	void theUnifiedPoolIsAThirdPoolKindWhenEnabled() {
		this.runner.withPropertyValues("gpumem.unified-pool.enabled=true").run((context) -> {
			StratifiedMemoryPool unified = context.getBean("gpumemUnifiedPool", StratifiedMemoryPool.class);
			assertThat(unified.kind()).isEqualTo(MemoryKind.UNIFIED);
			assertThat(context.getBean(GpumemPools.class).asMap()).containsKey("unified");
		});
	}

	@Test
	void withoutThePinnedPoolThereAreNoTransfersNorReductionCache() {
		this.runner.withPropertyValues("gpumem.pinned-pool.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean("gpumemPinnedPool")
				.doesNotHaveBean(Transfers.class)
				.doesNotHaveBean(ReductionBufferCache.class);
			assertThat(context.getBean(GpumemPools.class).asMap()).containsOnlyKeys("device");
		});
	}

	@Test
	void theReductionCacheAndPressureHandlerCanBeTurnedOff() {
		this.runner.withPropertyValues("gpumem.reduction-cache.enabled=false", "gpumem.pressure.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(ReductionBufferCache.class)
				.doesNotHaveBean(PressureHandler.class)
				.hasBean("gpumemDevicePool"));
	}

	@Test
	void disabledMeansNoGpumemBeanAtAll() {
		this.runner.withPropertyValues("gpumem.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(GpuBackend.class)
				.doesNotHaveBean(StratifiedMemoryPool.class)
				.doesNotHaveBean(GpumemPools.class));
	}

	@Test
	void userSuppliedBeansWin() {
		this.runner.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context.getBean(GpuBackend.class)).isSameAs(context.getBean("myBackend"));
			assertThat(context.getBean(GpuBackend.class).memoryInfo().totalBytes()).isEqualTo(8L << 20);
			assertThat(context.getBean("gpumemDevicePool", StratifiedMemoryPool.class).name()).isEqualTo("mine");
			assertThat(context.getBean(GpumemPools.class).asMap()).containsKeys("mine", "pinned");
		});
	}

	@Test
	void pressureReactionsAndThresholdsComeFromProperties() {
		this.runner
			.withPropertyValues("gpumem.pressure.thresholds.elevated=0.5", "gpumem.pressure.thresholds.warning=0.6",
					"gpumem.pressure.thresholds.critical=0.8", "gpumem.pressure.reactions.elevated=callback",
					"gpumem.pressure.reactions.critical=none", "gpumem.pressure.shrink-target=0.4",
					"gpumem.pressure.hysteresis.margin=0.02", "gpumem.pressure.hysteresis.min-duration=30s")
			.run((context) -> {
				PressureHandler handler = context.getBean(PressureHandler.class);
				assertThat(handler.thresholds().warning()).isEqualTo(0.6);
				assertThat(handler.hysteresis()).isEqualTo(new PressureHysteresis(0.02, Duration.ofSeconds(30)));
				assertThat(handler.reaction(PressureLevel.ELEVATED)).isEqualTo(PressureReaction.callback());
				assertThat(handler.reaction(PressureLevel.WARNING)).isEqualTo(PressureReaction.shrink(0.4));
				assertThat(handler.reaction(PressureLevel.CRITICAL)).isEqualTo(PressureReaction.none());
			});
	}

	@Test
	void aPressureTransitionIsPublishedAsAnApplicationEvent() {
		this.runner.withUserConfiguration(EventCollector.class)
			.withPropertyValues("gpumem.device-pool.size-classes=1MB", "gpumem.device-pool.warm[1MB]=52",
					"gpumem.memory-fraction=1", "gpumem.pressure.reactions.warning=none")
			.run((context) -> {
				PressureHandler handler = context.getBean(PressureHandler.class);
				assertThat(handler.check()).isEqualTo(PressureLevel.WARNING);
				List<GpumemPressureChangedEvent> events = context.getBean(EventCollector.class).events;
				assertThat(events).isNotEmpty();
				assertThat(events.get(events.size() - 1).getChange().level()).isEqualTo(PressureLevel.WARNING);
				assertThat(events.get(events.size() - 1).getSource()).isSameAs(handler);
			});
	}

	@Test
	void theThreadCachePropertiesOfEarlierSnapshotsAreGoneAndStopStartupAsAnyUnknownProperty() {
		this.runner.withPropertyValues("gpumem.device-pool.thread-cache.buffers-per-class=16").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("gpumem.device-pool.thread-cache.buffers-per-class");
		});
	}

	@Test
	void theMetadataDescribesTheHealthKeyAndSuggestsSizesForEveryPoolsSizeKeyedMaps() throws Exception {
		JsonNode metadata;
		try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			metadata = JsonMapper.shared().readTree(in);
		}
		List<String> properties = new ArrayList<>();
		metadata.get("properties").forEach((property) -> properties.add(property.get("name").asString()));
		assertThat(properties).contains("management.health.gpumem.enabled");
		List<String> hinted = new ArrayList<>();
		metadata.get("hints").forEach((hint) -> {
			hinted.add(hint.get("name").asString());
			hint.path("values").forEach((value) -> assertThat(value.path("description").asString()).isNotBlank());
		});
		assertThat(properties).contains("gpumem.fault-injection.every-nth", "gpumem.fault-injection.probability",
				"gpumem.fault-injection.seed", "gpumem.fault-injection.pools");
		assertThat(hinted).contains("gpumem.devices").doesNotContain("gpumem.fault-injection.pools");
		assertThat(properties).contains("gpumem.devices", "gpumem.host.devices");
		for (String pool : List.of("device-pool", "pinned-pool", "unified-pool")) {
			assertThat(properties).contains("gpumem." + pool + ".warm", "gpumem." + pool + ".max-cached-buffers");
			assertThat(hinted).contains("gpumem." + pool + ".warm.keys", "gpumem." + pool + ".max-cached-buffers.keys");
		}
	}

	@Test
	void poolCustomizersRunInOrderAfterThePropertiesForEveryPool() {
		List<String> customized = new CopyOnWriteArrayList<>();
		this.runner.withPropertyValues("gpumem.device-pool.max-cached=8MB", "gpumem.unified-pool.enabled=true")
			.withBean("second", GpumemPoolCustomizer.class, () -> new OrderedCustomizer(2, (pool, config) -> {
				customized.add(pool + " 2");
				config.maxCachedBytes(2 * config.build().maxCachedBytes());
			}))
			.withBean("first", GpumemPoolCustomizer.class, () -> new OrderedCustomizer(1, (pool, config) -> {
				customized.add(pool + " 1");
				if (pool.equals("device")) {
					config.sizeClasses(4096, 65536).warm(65536, 2);
				}
			}))
			.run((context) -> {
				StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				assertThat(device.statistics().maxCachedBytes()).as("the property, then doubled").isEqualTo(16L << 20);
				assertThat(device.statistics().sizeClasses()).extracting(SizeClassStatistics::cachedBuffers)
					.containsExactly(0L, 2L);
				assertThat(customized).containsExactlyInAnyOrder("device 1", "device 2", "pinned 1", "pinned 2",
						"unified 1", "unified 2");
				assertThat(customized.indexOf("device 1")).isLessThan(customized.indexOf("device 2"));
			});
	}

	/** A customizer with an order, as a bean implementing {@code Ordered} would be. */
	private record OrderedCustomizer(int order, GpumemPoolCustomizer delegate)
			implements GpumemPoolCustomizer, Ordered {

		@Override
		public void customize(String pool, PoolConfig.Builder config) {
			this.delegate.customize(pool, config);
		}

		@Override
		public int getOrder() {
			return this.order;
		}

	}

	@Test
	void admissionIsUnlimitedByDefaultAndAPoolFailsAtOnceWithoutAWait() {
		this.runner.withPropertyValues("gpumem.device-pool.size-classes=32MB").run((context) -> {
			GpuAdmission admission = context.getBean(GpuAdmission.class);
			assertThat(admission.maxConcurrent()).isZero();
			assertThat(admission.name()).isEqualTo("host device 0");
			StratifiedMemoryPool device = context.getBean(StratifiedMemoryPool.class);
			try (PooledBuffer held = device.acquire(32L << 20)) {
				assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.acquire(32L << 20))
					.withMessageNotContaining("waited");
			}
		});
	}

	@Test
	void whatAPoolDoesWhileAsleepComesFromItsProperty() {
		this.runner.withPropertyValues("gpumem.device-pool.segments=expandable",
				"gpumem.device-pool.sleep.on-acquire=refuse").run((context) -> {
					StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
					StratifiedMemoryPool pinned = context.getBean("gpumemPinnedPool", StratifiedMemoryPool.class);
					assertThat(device.config().sleepOnAcquire()).isEqualTo(SleepOnAcquire.REFUSE);
					assertThat(pinned.config().sleepOnAcquire()).isEqualTo(SleepOnAcquire.WAKE);
					device.sleep(SleepMode.OFFLOAD);
					assertThatExceptionOfType(PoolAsleepException.class).isThrownBy(() -> device.acquire(1024));
					device.wake();
					device.acquire(1024).close();
				});
	}

	/**
	 * A device pool that no buffer is acquired from or closed to for sleep-after-idle sleeps, offloading, and a use of
	 * its buffer wakes it: each published once.
	 */
	@Test
	void aDevicePoolIdleForSleepAfterIdleSleepsAndItsSleepsAndWakesArePublished() {
		this.runner.withUserConfiguration(SleepEvents.class)
			.withPropertyValues("gpumem.device-pool.segments=expandable", "gpumem.device-pool.sleep-after-idle=200ms")
			.run((context) -> {
				StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				try (PooledBuffer held = device.acquire(3L << 20)) {
					held.fill((byte) 5);
					await().atMost(Duration.ofSeconds(30))
						.until(() -> device.sleepStatus().state() == SleepStatus.State.ASLEEP);
					assertThat(device.reservedBytes()).isZero();
					byte[] back = new byte[(int) held.size()];
					held.copyTo(back);
					byte[] written = new byte[back.length];
					Arrays.fill(written, (byte) 5);
					assertThat(back).isEqualTo(written);
				}
				List<GpumemSleepEvent> events = context.getBean(SleepEvents.class).events;
				assertThat(events).as("a sleep, a wake, and another sleep where the test idled as long")
					.hasSizeBetween(2, 3);
				assertThat(events.get(0).getPool()).isSameAs(device);
				assertThat(events.get(0).getSleep().offloadedBytes()).isEqualTo(4L << 20);
				assertThat(events.get(1).getWake().cause()).isEqualTo("a use of a lent buffer");
			});
	}

	@Test
	void aNegativeSleepAfterIdleStopsStartupNamingTheProperty() {
		this.runner.withPropertyValues("gpumem.device-pool.sleep-after-idle=-1s").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class, (ex) -> {
					assertThat(ex.getName()).isEqualTo("gpumem.device-pool.sleep-after-idle");
					assertThat(ex.getReason()).isEqualTo("must be zero (never) or more");
				});
		});
	}

	@Test
	void aModeOfSleepOnAcquireOtherThanWakeOrRefuseStopsStartupNamingTheProperty() {
		this.runner.withPropertyValues("gpumem.device-pool.sleep.on-acquire=nap").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under 'gpumem.device-pool.sleep.on-acquire'");
		});
	}

	@Test
	void admissionAndTheWaitForMemoryComeFromProperties() {
		this.runner
			.withPropertyValues("gpumem.admission.max-concurrent=4", "gpumem.admission.max-wait=250ms",
					"gpumem.device-pool.size-classes=32MB", "gpumem.device-pool.max-wait=100ms")
			.run((context) -> {
				GpuAdmission admission = context.getBean(GpuAdmission.class);
				assertThat(admission.maxConcurrent()).isEqualTo(4);
				assertThat(admission.maxWait()).isEqualTo(Duration.ofMillis(250));
				StratifiedMemoryPool device = context.getBean(StratifiedMemoryPool.class);
				try (PooledBuffer held = device.acquire(32L << 20)) {
					assertThatExceptionOfType(GpuOutOfMemoryException.class)
						.isThrownBy(() -> device.acquire(32L << 20))
						.withMessageMatching("(?s).*waited \\d+ ms for memory to be returned.*");
				}
				assertThat(device.statistics().memoryWaits().timeouts()).isEqualTo(1);
			});
	}

	@Test
	void anUnknownGpumemPropertyStopsStartupNamingIt() {
		this.runner.withPropertyValues("gpumem.device-pool.max-cahced=1MB").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("gpumem.device-pool.max-cahced");
		});
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			gpumem.device=-1                                | gpumem.device                                | must be 0 or more
			gpumem.host.capacity=-1GB                       | gpumem.host.capacity                         | must be positive
			gpumem.host.pinned-capacity=0B                  | gpumem.host.pinned-capacity                  | must be positive
			gpumem.memory-fraction=1.5                      | gpumem.memory-fraction                       | must lie in (0, 1]
			gpumem.device-pool.size-classes=4KB,1KB         | gpumem.device-pool.size-classes              | strictly ascending (4096 is followed by 1024)
			gpumem.device-pool.max-cached=-1MB              | gpumem.device-pool.max-cached                | must not be negative
			gpumem.device-pool.max-wait=-1s                 | gpumem.device-pool.max-wait                  | must be zero or more
			gpumem.pinned-pool.idle-trim-after=-1s          | gpumem.pinned-pool.idle-trim-after           | must not be negative
			gpumem.device-pool.segment-size=1000B           | gpumem.device-pool.segment-size              | must be a positive multiple of 256 B
			gpumem.device-pool.mapping-step=0B              | gpumem.device-pool.mapping-step              | must be positive
			gpumem.device-pool.max-cached-buffers[4KB]=-1   | gpumem.device-pool.max-cached-buffers[4KB]   | must not be negative
			gpumem.device-pool.warm[1KB]=-3                 | gpumem.device-pool.warm[1KB]                 | must not be negative
			gpumem.device-pool.warm[1024]=-3                | gpumem.device-pool.warm[1024]                | must not be negative
			gpumem.reduction-cache.max-buffers-per-key=-1   | gpumem.reduction-cache.max-buffers-per-key   | must not be negative
			gpumem.pressure.thresholds.elevated=0.8         | gpumem.pressure.thresholds.warning           | must be above elevated (0.8)
			gpumem.pressure.thresholds.critical=1.1         | gpumem.pressure.thresholds.critical          | must be 1 or less
			gpumem.pressure.shrink-target=0                 | gpumem.pressure.shrink-target                | must be in (0, 1]
			gpumem.pressure.check-interval=0s               | gpumem.pressure.check-interval               | must be positive
			gpumem.pressure.oom-retries=-1                  | gpumem.pressure.oom-retries                  | must not be negative
			gpumem.pressure.hysteresis.margin=1             | gpumem.pressure.hysteresis.margin            | must be in [0, 1)
			gpumem.pressure.hysteresis.min-duration=-1s     | gpumem.pressure.hysteresis.min-duration      | must be 0 or more
			gpumem.admission.max-concurrent=-2              | gpumem.admission.max-concurrent              | must be 0 (no limit) or more
			gpumem.admission.max-wait=-1s                   | gpumem.admission.max-wait                    | must be 0 or more
			""")
	void aValueCoreRefusesStopsStartupNamingTheLeafPropertyAndTheRule(String property, String name, String rule) {
		this.runner.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class, (ex) -> {
					assertThat(ex.getName()).isEqualTo(name);
					assertThat(ex.getReason()).contains(rule);
				});
		});
	}

	@Test
	void anIdleTrimOfZeroTurnsIdleTrimmingOffAsInCore() {
		this.runner.withPropertyValues("gpumem.device-pool.idle-trim-after=0s")
			.run((context) -> assertThat(context).hasNotFailed());
		GpumemProperties properties = new GpumemProperties();
		properties.getDevicePool().setIdleTrimAfter(Duration.ZERO);
		assertThat(PoolConfigs.from("device", "gpumem.device-pool", properties.getDevicePool(), PoolPreset.DEFAULT,
				properties, List.of(), new StandardEnvironment()).idleTrimAfter()).isNull();
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		@Bean
		GpuBackend myBackend() {
			return new HostBackend(8L << 20);
		}

		@Bean
		StratifiedMemoryPool gpumemDevicePool(GpuBackend backend) {
			return new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE), PoolConfig.builder("mine").build());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SleepEvents implements ApplicationListener<GpumemSleepEvent> {

		final List<GpumemSleepEvent> events = new CopyOnWriteArrayList<>();

		@Override
		public void onApplicationEvent(GpumemSleepEvent event) {
			this.events.add(event);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class EventCollector implements ApplicationListener<GpumemPressureChangedEvent> {

		final List<GpumemPressureChangedEvent> events = new CopyOnWriteArrayList<>();

		@Override
		public void onApplicationEvent(GpumemPressureChangedEvent event) {
			this.events.add(event);
		}

	}

}
