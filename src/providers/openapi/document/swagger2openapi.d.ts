// The few parts of swagger2openapi (which ships no types) that Tend uses.
declare module 'swagger2openapi' {
  /** Conversion options; the converter also writes its results back into this object. */
  interface ConvertOptions {
    patch?: boolean;
    warnOnly?: boolean;
    resolve?: boolean;
    direct?: boolean;
    warnProperty?: string;
    patches?: number;
  }
  const s2o: {
    /** Converts a parsed Swagger 2.0 document to OpenAPI 3.0. */
    convertObj(
      swagger: unknown,
      options: ConvertOptions,
    ): Promise<{ openapi: Record<string, unknown> }>;
  };
  export default s2o;
}
