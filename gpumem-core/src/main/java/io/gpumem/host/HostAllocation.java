package io.gpumem.host;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ByteBufferAccess;
import io.gpumem.memory.DeviceHealth;
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

	private final DeviceHealth health;

	/** The range whose mapped bytes this is a view of, or null for a block of its own. */
	private final HostVirtualMemory.Range range;

	private final long rangeOffset;

	private volatile boolean freed;

	HostAllocation(MemoryKind kind, ByteBuffer buffer, DeviceHealth health) {
		this(kind, buffer, health, null, 0);
	}

	HostAllocation(MemoryKind kind, ByteBuffer buffer, DeviceHealth health, HostVirtualMemory.Range range,
			long rangeOffset) {
		this.kind = kind;
		this.buffer = buffer;
		this.health = health;
		this.range = range;
		this.rangeOffset = rangeOffset;
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
		checkUsable();
		if (type == ByteBuffer.class) {
			return type.cast(this.buffer.duplicate().order(ByteOrder.nativeOrder()));
		}
		throw new IllegalArgumentException("a host allocation unwraps to ByteBuffer, not " + type.getName());
	}

	@Override
	public void copyFromHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
		checkUsable();
		ByteBufferAccess.copyIn(this.buffer, byteOffset, array, arrayIndex, count, type);
	}

	@Override
	public void copyToHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
		checkUsable();
		ByteBufferAccess.copyOut(this.buffer, byteOffset, array, arrayIndex, count, type);
	}

	/** {@inheritDoc} Buffer to buffer, between blocks of the host backend. */
	@Override
	public void copyTo(long byteOffset, Allocation target, long targetOffset, long bytes) {
		if (!(target instanceof HostAllocation host)) {
			Allocation.super.copyTo(byteOffset, target, targetOffset, bytes);
			return;
		}
		checkUsable();
		host.checkUsable();
		host.buffer.put(Math.toIntExact(targetOffset), this.buffer, Math.toIntExact(byteOffset),
				Math.toIntExact(bytes));
	}

	@Override
	public void fill(long byteOffset, long byteCount, byte value) {
		checkUsable();
		ByteBufferAccess.fill(this.buffer, byteOffset, byteCount, value);
	}

	@Override
	public void fillInts(long byteOffset, long count, int value) {
		checkUsable();
		ByteBufferAccess.fillInts(this.buffer, byteOffset, count, value);
	}

	@Override
	public Allocation slice(long byteOffset, long bytes) {
		checkUsable();
		return new HostAllocation(this.kind,
				this.buffer.slice(Math.toIntExact(byteOffset), Math.toIntExact(bytes)).order(ByteOrder.nativeOrder()),
				this.health, this.range, this.rangeOffset + byteOffset);
	}

	void markFreed() {
		if (!FREED.compareAndSet(this, false, true)) {
			throw new IllegalStateException("host " + this.kind + " allocation of " + size() + " bytes freed twice");
		}
	}

	/**
	 * Refuses use after free or of bytes no longer mapped, and, as a CUDA device's memory does, any use once the
	 * device has failed.
	 */
	private void checkUsable() {
		if (this.freed) {
			throw new IllegalStateException("host " + this.kind + " allocation of " + size() + " bytes used after free");
		}
		if (this.range != null) {
			this.range.checkMapped(this.rangeOffset, size());
		}
		this.health.check();
	}

	@Override
	public String toString() {
		return "HostAllocation[" + this.kind + ", " + size() + " bytes" + (this.freed ? ", freed" : "") + "]";
	}

}
