package io.gpumem.sample.web;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.coyote.ActionCode;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

import io.gpumem.sample.ConditionalOnGpumem;

/**
 * Tells a request's work that its client has closed the connection, the way Go's HTTP server does: once
 * the body is read, a non-blocking read on the connection that meets the end of the stream means the client
 * has gone. Tomcat itself learns it only when it writes, which a request computing its answer does not do.
 * <p>
 * The read goes through Tomcat's own input buffer, so bytes of a pipelined next request are kept for it.
 * Each request in progress is probed every 250 ms on one thread. A client that half-closes its side after
 * sending the request reads as gone, as it does for Go.
 */
@Component
@ConditionalOnGpumem
class DisconnectWatcher implements WebServerFactoryCustomizer<TomcatServletWebServerFactory>, DisposableBean {

	private static final String CONNECTION = DisconnectWatcher.class.getName() + ".connection";

	private static final Duration INTERVAL = Duration.ofMillis(250);

	private final ScheduledExecutorService probes = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "client-disconnect-watcher");
		thread.setDaemon(true);
		return thread;
	});

	@Override
	public void customize(TomcatServletWebServerFactory factory) {
		factory.addEngineValves(new ConnectionValve());
	}

	/**
	 * Calls {@code onGone} once if the client of {@code request}, an async request whose body has been read,
	 * closes its connection before the returned watch is closed. Close the watch before the answer is
	 * handed to the container: the probe and the container must not read the connection at once.
	 */
	Watch watch(HttpServletRequest request, Runnable onGone) {
		Object connection = request.getAttribute(CONNECTION);
		Watch watch = new Watch((org.apache.coyote.Request) connection, onGone);
		if (connection != null) {
			watch.start(this.probes);
		}
		return watch;
	}

	@Override
	public void destroy() {
		this.probes.shutdownNow();
	}

	/** Watches one request's connection until closed or until its client is found gone. */
	static final class Watch implements AutoCloseable {

		private final org.apache.coyote.Request connection;

		private final Runnable onGone;

		private ScheduledFuture<?> future;

		private boolean closed;

		private Watch(org.apache.coyote.Request connection, Runnable onGone) {
			this.connection = connection;
			this.onGone = onGone;
		}

		private synchronized void start(ScheduledExecutorService probes) {
			if (!this.closed) {
				this.future = probes.scheduleWithFixedDelay(this::probe, INTERVAL.toMillis(), INTERVAL.toMillis(),
						TimeUnit.MILLISECONDS);
			}
		}

		private synchronized void probe() {
			if (this.closed || !this.connection.isFinished()) {
				return;
			}
			if (readFailed()) {
				close();
				this.onGone.run();
			}
		}

		/**
		 * Tomcat's non-blocking read reports one byte available when the read fails (the end of the stream
		 * included), so that the next read throws; bytes really read, of a pipelined request, stay in its
		 * buffer and are still reported when nothing is read.
		 */
		private boolean readFailed() {
			this.connection.action(ActionCode.AVAILABLE, Boolean.TRUE);
			if (this.connection.getAvailable() == 0) {
				return false;
			}
			this.connection.action(ActionCode.AVAILABLE, Boolean.FALSE);
			return this.connection.getAvailable() == 0;
		}

		@Override
		public synchronized void close() {
			this.closed = true;
			if (this.future != null) {
				this.future.cancel(false);
			}
		}

	}

	/** Hands each request's Tomcat connection to the watcher, through a request attribute. */
	private static final class ConnectionValve extends ValveBase {

		ConnectionValve() {
			super(true);
		}

		@Override
		public void invoke(Request request, Response response) throws IOException, ServletException {
			if ("HTTP/1.1".equals(request.getProtocol())) {
				request.setAttribute(CONNECTION, request.getCoyoteRequest());
			}
			getNext().invoke(request, response);
		}

	}

}
