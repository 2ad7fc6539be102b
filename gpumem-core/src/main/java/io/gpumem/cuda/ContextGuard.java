package io.gpumem.cuda;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import io.gpumem.memory.DeviceHealth;

/**
 * The driver as one device's context sees it. An error that leaves the context unusable for good
 * ({@link CudaException#poisonsContext()}) marks the device failed, and the call fails with a
 * {@link io.gpumem.memory.GpuDeviceFailedException} naming it. Once the device has failed, nothing more reaches
 * the driver: what shutdown does (releases, making the context current, waits for work that will never run)
 * returns at once, an event counts as complete, and every other call fails as the first did.
 */
final class ContextGuard implements InvocationHandler {

	/** The calls a failed device answers without the driver: what closing pools, streams and the backend makes. */
	private static final Set<Method> SHUTDOWN = methods("setCurrentContext", "releasePrimaryContext", "freeDevice",
			"freePinned", "freeAsync", "trimMemoryPool", "destroyMemoryPool", "synchronizeStream", "destroyStream",
			"synchronizeEvent", "destroyEvent", "unloadModule");

	private static final Method QUERY_EVENT = methods("queryEvent").iterator().next();

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
			return method.invoke(this, arguments);
		}
		if (this.health.isFailed()) {
			if (method.equals(QUERY_EVENT)) {
				return true;
			}
			if (SHUTDOWN.contains(method)) {
				return null;
			}
			this.health.check();
		}
		try {
			return method.invoke(this.driver, arguments);
		}
		catch (InvocationTargetException ex) {
			if (ex.getCause() instanceof CudaException cuda && cuda.poisonsContext()) {
				throw this.health.fail(cuda.codeName() + " (" + cuda.code() + ")", cuda.call(), cuda);
			}
			throw ex.getCause();
		}
	}

	@Override
	public String toString() {
		return "guarded " + this.driver;
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
