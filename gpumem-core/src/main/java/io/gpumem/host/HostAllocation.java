package io.gpumem.host;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryKind;

/** A block of the host backend: a native-order direct buffer. */
final class HostAllocation implements Allocation {

	private static final VarHandle FREED;

	static {
		try {
			FREED = MethodHandles.lookup().findVarHandle(HostAllocation.class, "freed", boolean.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final MemoryKind kind;

	private final ByteBuffer buffer;

	private volatile boolean freed;

	HostAllocation(MemoryKind kind, ByteBuffer buffer) {
		this.kind = kind;
		this.buffer = buffer;
	}

	@Override
	public long size() {
		return this.buffer.capacity();
	}

	@Override
	public MemoryKind kind() {
		return this.kind;
	}

	@Override
	public <T> T unwrap(Class<T> type) {
		checkNotFreed();
		if (type == ByteBuffer.class) {
			return type.cast(this.buffer.duplicate().order(ByteOrder.nativeOrder()));
		}
		throw new IllegalArgumentException("a host allocation unwraps to ByteBuffer, not " + type.getName());
	}

	@Override
	public void copyFromHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
		checkNotFreed();
		int offset = (int) byteOffset;
		switch (type) {
			case BYTE -> this.buffer.put(offset, (byte[]) array, arrayIndex, count);
			case INT -> view(offset, count, type).asIntBuffer().put((int[]) array, arrayIndex, count);
			case LONG -> view(offset, count, type).asLongBuffer().put((long[]) array, arrayIndex, count);
			case FLOAT -> view(offset, count, type).asFloatBuffer().put((float[]) array, arrayIndex, count);
			case DOUBLE -> view(offset, count, type).asDoubleBuffer().put((double[]) array, arrayIndex, count);
		}
	}

	@Override
	public void copyToHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
		checkNotFreed();
		int offset = (int) byteOffset;
		switch (type) {
			case BYTE -> this.buffer.get(offset, (byte[]) array, arrayIndex, count);
			case INT -> view(offset, count, type).asIntBuffer().get((int[]) array, arrayIndex, count);
			case LONG -> view(offset, count, type).asLongBuffer().get((long[]) array, arrayIndex, count);
			case FLOAT -> view(offset, count, type).asFloatBuffer().get((float[]) array, arrayIndex, count);
			case DOUBLE -> view(offset, count, type).asDoubleBuffer().get((double[]) array, arrayIndex, count);
		}
	}

	@Override
	public void fill(long byteOffset, long byteCount, byte value) {
		checkNotFreed();
		int offset = (int) byteOffset;
		int end = Math.addExact(offset, (int) byteCount);
		int longEnd = offset + ((end - offset) & ~7);
		long pattern = (value & 0xFFL) * 0x0101010101010101L;
		for (int i = offset; i < longEnd; i += Long.BYTES) {
			this.buffer.putLong(i, pattern);
		}
		for (int i = longEnd; i < end; i++) {
			this.buffer.put(i, value);
		}
	}

	void markFreed() {
		if (!FREED.compareAndSet(this, false, true)) {
			throw new IllegalStateException("host " + this.kind + " allocation of " + size() + " bytes freed twice");
		}
	}

	private ByteBuffer view(int byteOffset, int count, ElementType type) {
		return this.buffer.slice(byteOffset, count * type.bytes()).order(ByteOrder.nativeOrder());
	}

	private void checkNotFreed() {
		if (this.freed) {
			throw new IllegalStateException("host " + this.kind + " allocation of " + size() + " bytes used after free");
		}
	}

	@Override
	public String toString() {
		return "HostAllocation[" + this.kind + ", " + size() + " bytes" + (this.freed ? ", freed" : "") + "]";
	}

}
