package io.gpumem.autoconfigure;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.LivenessState;
import org.springframework.context.ApplicationEventPublisher;

import io.gpumem.device.GpumemDevices;

/**
 * Publishes {@link LivenessState#BROKEN} when a device fails for good: only a restart of the process can use it
 * again, so {@code /actuator/health/liveness} answers 503 and a Kubernetes liveness probe restarts the pod. The
 * other devices keep serving until then.
 */
public final class DeviceFailureLiveness {

	DeviceFailureLiveness(GpumemDevices devices, ApplicationEventPublisher events) {
		devices.all()
			.forEach((device) -> device.backend()
				.health()
				.onFailure((failure) -> AvailabilityChangeEvent.publish(events, failure, LivenessState.BROKEN)));
	}

}
