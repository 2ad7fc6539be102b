package io.gpumem.sample;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that closes its connection while its request computes has the work stopped and its device memory
 * back long before the request's deadline; a client that pipelines its next request on the same connection
 * is not taken for gone, and both of its requests are answered.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "sample.request-timeout=60s" })
class ClientDisconnectHttpTest {

	private static final String COSTLY = "{\"nodes\":1000000,\"edgesPerNode\":4,\"seed\":7,\"iterations\":1000}";

	@LocalServerPort
	private int port;

	@Autowired
	private StratifiedMemoryPool devicePool;

	@Autowired
	private GpuAdmission admission;

	@AfterEach
	void nothingLeftRunning() {
		await(Duration.ofSeconds(10), () -> this.admission.active() == 0 && this.devicePool.usedBytes() == 0);
	}

	@Test
	void aClientThatClosesItsConnectionHasItsWorkStoppedAndItsMemoryBack() throws Exception {
		try (Socket socket = new Socket("localhost", this.port)) {
			socket.getOutputStream().write(post("/api/graphs/pagerank", COSTLY, "keep-alive"));
			await(Duration.ofSeconds(10), () -> this.admission.active() == 1 && this.devicePool.usedBytes() > 0);
		}
		await(Duration.ofSeconds(3), () -> this.admission.active() == 0 && this.devicePool.usedBytes() == 0);
	}

	@Test
	void aPipelinedRequestIsKeptForItsTurnAndBothAreAnswered() throws Exception {
		String first = "{\"nodes\":1000000,\"edgesPerNode\":4,\"seed\":7,\"iterations\":150}";
		try (Socket socket = new Socket("localhost", this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(post("/api/graphs/pagerank", first, "keep-alive"));
			await(Duration.ofSeconds(10), () -> this.admission.active() == 1);
			out.write(post("/api/vectors/add", "{\"a\":[1,2],\"b\":[2,3]}", "close"));
			String answers = readAll(socket.getInputStream());
			assertThat(answers.split("HTTP/1.1 200", -1)).as(answers).hasSize(3);
			assertThat(answers).contains("\"top\":[").endsWith("{\"result\":[3.0,5.0]}");
		}
	}

	private static byte[] post(String path, String body, String connection) {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		String head = "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				+ "Content-Length: " + bytes.length + "\r\nConnection: " + connection + "\r\n\r\n";
		return (head + body).getBytes(StandardCharsets.UTF_8);
	}

	private static String readAll(InputStream in) throws Exception {
		return new String(in.readAllBytes(), StandardCharsets.UTF_8);
	}

	private static void await(Duration timeout, BooleanSupplier condition) {
		long end = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - end).as("waited %s for a condition", timeout).isNegative();
			try {
				Thread.sleep(5);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

}
