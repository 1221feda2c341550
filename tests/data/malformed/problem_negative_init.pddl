; :init lists the true atoms only; everything else is false.
(define (problem ferry-bad)
  (:domain ferry)
  (:objects l0 l1 c0)
  (:init (location l0) (location l1) (car c0) (at-ferry l0)
         (not (empty-ferry)) (at c0 l0))
  (:goal (and (at c0 l1))))
