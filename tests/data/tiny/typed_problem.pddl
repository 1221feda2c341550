; A valid problem for typed_domain.pddl.
(define (problem delivery-tiny)
  (:domain delivery)
  (:objects t1 - truck p1 - package a b - place)
  (:init (at t1 depot) (at p1 a)
         (road depot a) (road a depot) (road a b) (road b a))
  (:goal (and (at p1 b) (marked depot))))
