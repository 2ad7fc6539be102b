package io.gpumem.pool;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/** Tells virtual threads (Java 21) from platform threads on any Java from 17, where the former do not exist. */
final class VirtualThreads {

	private static final MethodHandle IS_VIRTUAL = findIsVirtual();

	private VirtualThreads() {
	}

	static boolean isVirtual(Thread thread) {
		if (IS_VIRTUAL == null) {
			return false;
		}
		try {
			return (boolean) IS_VIRTUAL.invokeExact(thread);
		}
		catch (Throwable ex) {
			throw new IllegalStateException("Thread.isVirtual failed", ex);
		}
	}

	private static MethodHandle findIsVirtual() {
		try {
			return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
		}
		catch (NoSuchMethodException | IllegalAccessException ex) {
			return null;
		}
	}

}
