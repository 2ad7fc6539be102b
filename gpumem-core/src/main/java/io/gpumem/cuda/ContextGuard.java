package io.gpumem.cuda;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.GpuDeviceFailedException;

/**
 * The driver as one device's context sees it. An error that leaves the context unusable for good
 * ({@link CudaException#poisonsContext()}) marks the device failed. From then on nothing more reaches the driver:
 * what releases a resource or waits for work (the calls closing pools, streams and the backend make) returns at
 * once, an event query answers complete, and every other call fails with a
 * {@link io.gpumem.memory.GpuDeviceFailedException} naming the first error; so does the call that met it, unless
 * it is one of those. The waits users make ({@link CudaStream#synchronize()}, {@link CudaEvent}) then refuse to
 * report work done ({@link CudaDevice#checkWorking()}).
 */
final class ContextGuard implements InvocationHandler {

	/** The calls a failed context answers without the driver: each releases a resource or waits for work. */
	private static final Set<Method> ANSWERED = methods("setCurrentContext", "releasePrimaryContext", "freeDevice",
			"freePinned", "freeAsync", "trimMemoryPool", "destroyMemoryPool", "synchronizeStream", "destroyStream",
			"synchronizeEvent", "destroyEvent", "unloadModule", "queryEvent", "unmap", "releasePhysical",
			"freeAddresses");

	private final CudaDriver driver;

	private final DeviceHealth health;

	private ContextGuard(CudaDriver driver, DeviceHealth health) {
		this.driver = driver;
		this.health = health;
	}

	/** {@code driver}, guarded for the device whose health is {@code health}. */
	static CudaDriver guard(CudaDriver driver, DeviceHealth health) {
		return (CudaDriver) Proxy.newProxyInstance(CudaDriver.class.getClassLoader(),
				new Class<?>[] { CudaDriver.class }, new ContextGuard(driver, health));
	}

	@Override
	public Object invoke(Object proxy, Method method, Object[] arguments) throws Throwable {
		if (method.getDeclaringClass() == Object.class) {
			return switch (method.getName()) {
				case "equals" -> proxy == arguments[0];
				case "hashCode" -> System.identityHashCode(proxy);
				default -> "guarded " + this.driver;
			};
		}
		if (!this.health.isFailed()) {
			try {
				return method.invoke(this.driver, arguments);
			}
			catch (InvocationTargetException ex) {
				if (!(ex.getCause() instanceof CudaException cuda && cuda.poisonsContext())) {
					throw ex.getCause();
				}
				GpuDeviceFailedException failed = this.health.fail(cuda.codeName() + " (" + cuda.code() + ")",
						cuda.call(), cuda);
				if (!ANSWERED.contains(method)) {
					throw failed;
				}
			}
		}
		if (ANSWERED.contains(method)) {
			return (method.getReturnType() == boolean.class) ? Boolean.TRUE : null;
		}
		this.health.check();
		throw new IllegalStateException("unreachable: " + method);
	}

	private static Set<Method> methods(String... names) {
		Set<Method> methods = Arrays.stream(CudaDriver.class.getMethods())
			.filter((method) -> Arrays.asList(names).contains(method.getName()))
			.collect(Collectors.toSet());
		if (methods.size() != names.length) {
			throw new IllegalStateException("CudaDriver lacks one of " + Arrays.toString(names));
		}
		return methods;
	}

}
