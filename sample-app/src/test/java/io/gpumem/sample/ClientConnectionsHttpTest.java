package io.gpumem.sample;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a request's connection tells the service: a client that closes it has its work stopped, while one that
 * pipelines its next request on it is not taken for gone. The deadline is an hour, so that neither the work's
 * speed nor a deadline decides the outcome, only how the connection is read.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "sample.request-timeout=1h", "gpumem.admission.max-concurrent=1" })
class ClientConnectionsHttpTest {

	private static final String COSTLY = "{\"nodes\":1000000,\"edgesPerNode\":4,\"seed\":7,\"iterations\":1000}";

	@LocalServerPort
	private int port;

	@Autowired
	private StratifiedMemoryPool devicePool;

	@Autowired
	private GpuAdmission admission;

	@AfterEach
	void nothingLeftRunning() {
		await().atMost(Duration.ofMinutes(1))
			.until(() -> this.admission.active() == 0 && this.devicePool.usedBytes() == 0);
	}

	@Test
	void aClientThatClosesItsConnectionHasItsWorkStoppedAndItsMemoryBack() throws Exception {
		try (Socket socket = new Socket("localhost", this.port)) {
			socket.getOutputStream().write(rawPost("/api/graphs/pagerank", COSTLY, "keep-alive"));
			await().atMost(Duration.ofMinutes(1))
				.pollInterval(Duration.ofMillis(5))
				.until(() -> this.admission.active() == 1 && this.devicePool.usedBytes() > 0);
		}
		await("the work stopped, an hour before its deadline").atMost(Duration.ofMinutes(1))
			.until(() -> this.admission.active() == 0 && this.devicePool.usedBytes() == 0);
	}

	@Test
	void aPipelinedRequestIsKeptForItsTurnAndBothAreAnswered() throws Exception {
		String first = "{\"nodes\":400000,\"edgesPerNode\":4,\"seed\":7,\"iterations\":150}";
		try (Socket socket = new Socket("localhost", this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(rawPost("/api/graphs/pagerank", first, "keep-alive"));
			await().atMost(Duration.ofMinutes(1))
				.pollInterval(Duration.ofMillis(5))
				.until(() -> this.admission.active() == 1);
			out.write(rawPost("/api/vectors/add", "{\"a\":[1,2],\"b\":[2,3]}", "close"));
			String answers = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(answers.split("HTTP/1.1 200", -1)).as(answers).hasSize(3);
			assertThat(answers).contains("\"top\":[").endsWith("{\"result\":[3.0,5.0]}");
		}
	}

	private static byte[] rawPost(String path, String body, String connection) {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		String head = "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				+ "Content-Length: " + bytes.length + "\r\nConnection: " + connection + "\r\n\r\n";
		return (head + body).getBytes(StandardCharsets.UTF_8);
	}

}
