package io.gpumem.sample;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import jcuda.nvptxcompiler.JNvPTXCompiler;
import jcuda.nvptxcompiler.nvPTXCompileResult;
import jcuda.nvptxcompiler.nvPTXCompilerHandle;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every PTX file the service ships compiles with the PTX compiler of CUDA 12.0 (JCuda's, which needs no
 * driver) for the oldest and newest architectures served: so a CUDA 12 driver will load it.
 */
class PtxCompileTest {

	@ParameterizedTest
	@ValueSource(strings = { "sm_75", "sm_80", "sm_90" })
	void everyShippedPtxFileCompiles(String architecture) throws IOException {
		Resource[] files = new PathMatchingResourcePatternResolver().getResources("classpath*:kernels/*.ptx");
		assertThat(files).isNotEmpty();
		for (Resource file : files) {
			byte[] ptx = Arrays.copyOf(file.getContentAsByteArray(), (int) file.contentLength() + 1);
			assertThat(new String(ptx, StandardCharsets.US_ASCII)).contains(".version 8.0");
			nvPTXCompilerHandle compiler = new nvPTXCompilerHandle();
			assertThat(JNvPTXCompiler.nvPTXCompilerCreate(compiler, ptx.length, ptx))
				.isEqualTo(nvPTXCompileResult.NVPTXCOMPILE_SUCCESS);
			try {
				int result = JNvPTXCompiler.nvPTXCompilerCompile(compiler, 1,
						new String[] { "--gpu-name=" + architecture });
				assertThat(result).as("%s for %s: %s", file.getFilename(), architecture, errorLog(compiler))
					.isEqualTo(nvPTXCompileResult.NVPTXCOMPILE_SUCCESS);
				long[] size = new long[1];
				JNvPTXCompiler.nvPTXCompilerGetCompiledProgramSize(compiler, size);
				assertThat(size[0]).as("size of the compiled program").isPositive();
			}
			finally {
				JNvPTXCompiler.nvPTXCompilerDestroy(compiler);
			}
		}
	}

	private static String errorLog(nvPTXCompilerHandle compiler) {
		long[] size = new long[1];
		JNvPTXCompiler.nvPTXCompilerGetErrorLogSize(compiler, size);
		byte[] log = new byte[(int) size[0] + 1];
		JNvPTXCompiler.nvPTXCompilerGetErrorLog(compiler, log);
		return new String(log, StandardCharsets.UTF_8).trim();
	}

}
